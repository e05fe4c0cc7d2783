//! Where each agent keeps its own state, caches and configuration (which it must write under
//! `--sandbox`), and the files of its configuration that may name its provider's address (whose
//! port the sandbox lets it connect to). Found by running each real CLI against the fake
//! providers with `--sandbox` and reading what it was refused (docs/RELIABILITY.md, "Sandbox").

use std::path::PathBuf;

/// An agent's own paths.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct OwnPaths {
    /// Directories and files it writes in.
    pub write: Vec<PathBuf>,
    /// Files that may name its provider's URL.
    pub provider_files: Vec<PathBuf>,
}

/// Reads a variable of the agent's environment.
pub(crate) type Var<'a> = &'a dyn Fn(&str) -> Option<PathBuf>;

/// `$NAME`, else `~/default`.
fn xdg(var: Var<'_>, name: &str, default: &str) -> Option<PathBuf> {
    var(name)
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|h| h.join(default)))
}

/// OpenCode: its XDG data, cache, config and state directories; its `opencode.json` in the work
/// dir and in its config directory, and `$OPENCODE_CONFIG`.
pub(crate) fn opencode(var: Var<'_>, cwd: &std::path::Path) -> OwnPaths {
    let dirs = [
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_STATE_HOME", ".local/state"),
    ];
    let write: Vec<PathBuf> = dirs
        .iter()
        .filter_map(|(name, default)| xdg(var, name, default).map(|d| d.join("opencode")))
        .collect();
    let mut provider_files: Vec<PathBuf> = ["opencode.json", "opencode.jsonc"]
        .iter()
        .map(|f| cwd.join(f))
        .collect();
    if let Some(config) = xdg(var, "XDG_CONFIG_HOME", ".config") {
        provider_files.push(config.join("opencode/opencode.json"));
        provider_files.push(config.join("opencode/opencode.jsonc"));
    }
    provider_files.extend(var("OPENCODE_CONFIG"));
    OwnPaths {
        write,
        provider_files,
    }
}

/// Claude Code: `~/.claude` (or `$CLAUDE_CONFIG_DIR`) and `~/.claude.json`; its settings name
/// the provider in their `env`.
pub(crate) fn claude(var: Var<'_>) -> OwnPaths {
    let dir = var("CLAUDE_CONFIG_DIR").or_else(|| var("HOME").map(|h| h.join(".claude")));
    let mut write: Vec<PathBuf> = dir.iter().cloned().collect();
    write.extend(var("HOME").map(|h| h.join(".claude.json")));
    OwnPaths {
        provider_files: dir.iter().map(|d| d.join("settings.json")).collect(),
        write,
    }
}

/// Codex: `$CODEX_HOME`, else `~/.codex`, whose `config.toml` names its providers.
pub(crate) fn codex(var: Var<'_>) -> OwnPaths {
    let home = var("CODEX_HOME").or_else(|| var("HOME").map(|h| h.join(".codex")));
    OwnPaths {
        provider_files: home.iter().map(|h| h.join("config.toml")).collect(),
        write: home.into_iter().collect(),
    }
}
