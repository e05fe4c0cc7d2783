//! Which of the agent's variables a repository may not set without trust: those that change
//! which program runs, what code a program loads at start, which configuration (and so which
//! commands and servers) an agent reads, or where a program connects with the user's keys.
//! An API key, a log level or a feature switch runs nothing and needs no trust.

/// Names that are one of these exactly.
const NAMES: &[&str] = &[
    // Which program a name finds, and the shells and helpers programs start.
    "PATH",
    "SHELL",
    "ENV",
    "BASH_ENV",
    "ZDOTDIR",
    "PROMPT_COMMAND",
    "IFS",
    "CDPATH",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "MANPAGER",
    "BROWSER",
    "TERMINAL",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "SSH_AUTH_SOCK",
    // Where programs keep their configuration and caches.
    "HOME",
    "TMPDIR",
    "KUBECONFIG",
    "DOCKER_HOST",
    "DOCKER_CONFIG",
    "NETRC",
    "CURL_HOME",
    "WGETRC",
    "INPUTRC",
    // Code loaded by interpreters and loaders at start.
    "NODE_OPTIONS",
    "PYTHONSTARTUP",
    "PYTHONINSPECT",
    "PYTHONWARNINGS",
    "PYTHONBREAKPOINT",
    "PYTHONEXECUTABLE",
    "PYTHONSAFEPATH",
    "PERL5OPT",
    "PERL5DB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "CLASSPATH",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "GCONV_PATH",
    "HOSTALIASES",
    "RESOLV_HOST_CONF",
    "LOCALDOMAIN",
    "GLIBC_TUNABLES",
    "MALLOC_CONF",
    "BUNDLE_GEMFILE",
    "UV_PYTHON",
    // Compilers and build tools a check or an agent's command may start.
    "CC",
    "CXX",
    "LD",
    "AR",
    "MAKE",
    "MAKEFLAGS",
    "MFLAGS",
    "RUSTC",
    "RUSTDOC",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "CARGO",
    // Where programs connect, and whom they believe.
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "FTP_PROXY",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "NODE_TLS_REJECT_UNAUTHORIZED",
];

/// Names that start so: loaders, version control, package managers, the agents' own settings
/// and the base directories every program reads its configuration from.
const PREFIXES: &[&str] = &[
    "LD_",
    "DYLD_",
    "GIT_",
    "NODE_",
    "NPM_CONFIG_",
    "YARN_",
    "PNPM_",
    "BUN_",
    "DENO_",
    "PYTHON",
    "PIP_",
    "UV_",
    "PERL",
    "RUBY",
    "GEM_",
    "CARGO_",
    "RUSTUP_",
    "XDG_",
    "OPENCODE",
    "CLAUDE",
    "CODEX",
    "MCP_",
    "RUNBOOK_",
];

/// Names that end so: a search path, a program or command to start, options given to every
/// start of a program, a configuration file or home, or where requests go.
const SUFFIXES: &[&str] = &[
    "_PATH",
    "_LIBRARY",
    "_PRELOAD",
    "_COMMAND",
    "_CMD",
    "_EXEC",
    "_EXECUTABLE",
    "_BIN",
    "_SHELL",
    "_EDITOR",
    "_PAGER",
    "_WRAPPER",
    "_ASKPASS",
    "_OPTIONS",
    "_OPTS",
    "_FLAGS",
    "_HOME",
    "_CONFIG",
    "_CONFIG_FILE",
    "_CONFIG_DIR",
    "_CONFIG_CONTENT",
    "_RC",
    "_PROXY",
    "_BASE_URL",
    "_API_BASE",
    "_API_URL",
    "_ENDPOINT",
    "_CA_BUNDLE",
    "_CA_CERTS",
    "_CERT_FILE",
];

/// Whether a repository setting the agent's variable `name` can make something run (or send the
/// user's credentials somewhere) that would not otherwise. Case does not matter: `https_proxy`
/// is read as well as `HTTPS_PROXY`.
pub(crate) fn needs_trust(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    NAMES.contains(&name.as_str())
        || PREFIXES.iter().any(|p| name.starts_with(p))
        || SUFFIXES.iter().any(|s| name.ends_with(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_that_run_code_or_redirect_need_trust_and_plain_ones_do_not() {
        for name in [
            "PATH",
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "LD_AUDIT",
            "DYLD_INSERT_LIBRARIES",
            "NODE_OPTIONS",
            "node_options",
            "NODE_PATH",
            "PYTHONPATH",
            "PYTHONSTARTUP",
            "PERL5OPT",
            "RUBYOPT",
            "BASH_ENV",
            "ENV",
            "GIT_SSH_COMMAND",
            "GIT_CONFIG_GLOBAL",
            "npm_config_script_shell",
            "XDG_CONFIG_HOME",
            "HOME",
            "OPENCODE_CONFIG",
            "OPENCODE_CONFIG_CONTENT",
            "CLAUDE_CONFIG_DIR",
            "CODEX_HOME",
            "ANTHROPIC_BASE_URL",
            "OPENAI_BASE_URL",
            "https_proxy",
            "JAVA_TOOL_OPTIONS",
            "RUSTC_WRAPPER",
            "SSL_CERT_FILE",
            "EDITOR",
            "SHELL",
            "RUNBOOK_OPENCODE_BIN",
        ] {
            assert!(needs_trust(name), "{name} should need trust");
        }
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "DATABASE_NAME",
            "DATABASE_URL",
            "DATA_DIR",
            "RUST_LOG",
            "NO_COLOR",
            "CI",
            "TZ",
            "LANG",
            "ACME_TOKEN",
        ] {
            assert!(!needs_trust(name), "{name} should not need trust");
        }
    }
}
