//! The ports a sandboxed agent may connect to because its provider is there: the ports of the
//! provider addresses its variables and configuration files name. Only what says where requests
//! go counts (`baseURL`, `*_BASE_URL`, `*_PROXY`, an `endpoint`), never any address a file
//! merely mentions; and a file of the repository (its `opencode.json`) counts only once the
//! user trusts it for the run: an untrusted clone opens no port.

use std::path::{Path, PathBuf};

/// What the provider addresses open, and what they would have opened but for trust.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Ports {
    pub open: Vec<u16>,
    /// A repository's file not trusted, and a port it names.
    pub held: Vec<(PathBuf, u16)>,
}

/// The ports of the addresses in the environment runbook was started with, of the provider
/// addresses in the variables runbook sets for the agent that say where requests go (a
/// repository sets those only once trusted), and in `files`; `untrusted` tells a repository's
/// file not trusted.
pub(crate) fn provider_ports(
    env: &[(String, String)],
    files: &[PathBuf],
    untrusted: &dyn Fn(&Path) -> bool,
) -> Ports {
    let mut ports = Ports::default();
    // The user's own environment is the user's: any address in it counts.
    for (_, value) in std::env::vars_os() {
        ports
            .open
            .extend(value.to_str().map(url_ports).unwrap_or_default());
    }
    let set = env.iter().filter(|(name, _)| says_where_requests_go(name));
    for (_, value) in set {
        ports.open.extend(url_ports(value));
    }
    for file in files {
        let read = crate::files::read(
            file,
            crate::files::CONFIG_LIMIT,
            crate::files::Links::Follow,
        );
        let Some(text) = read.ok().and_then(|b| String::from_utf8(b).ok()) else {
            continue;
        };
        let found: Vec<u16> = provider_urls(file, &text)
            .iter()
            .flat_map(|u| url_ports(u))
            .collect();
        if untrusted(file) {
            ports
                .held
                .extend(found.into_iter().map(|p| (file.clone(), p)));
        } else {
            ports.open.extend(found);
        }
    }
    ports.held.retain(|(_, p)| !ports.open.contains(p));
    ports
}

/// Whether a setting or variable of this name says where requests go: `baseURL`,
/// `ANTHROPIC_BASE_URL`, `base_url`, `HTTPS_PROXY`, `api_base`, an `endpoint`.
fn says_where_requests_go(name: &str) -> bool {
    let plain: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    ["baseurl", "proxy", "apibase", "apiurl", "endpoint"]
        .iter()
        .any(|end| plain.ends_with(end))
}

/// The string values a configuration file gives to settings that say where requests go, at
/// any depth (`provider.NAME.options.baseURL`, `env.ANTHROPIC_BASE_URL`,
/// `model_providers.NAME.base_url`); JSON with comments, or TOML by its name.
fn provider_urls(path: &Path, text: &str) -> Vec<String> {
    let value: Option<serde_json::Value> = if path.extension().is_some_and(|e| e == "toml") {
        toml::from_str(text).ok()
    } else {
        jsonc_parser::parse_to_serde_value(text, &jsonc_parser::ParseOptions::default()).ok()
    };
    let mut out = Vec::new();
    if let Some(value) = value {
        collect(&value, None, &mut out);
    }
    out
}

fn collect(value: &serde_json::Value, key: Option<&str>, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) if key.is_some_and(says_where_requests_go) => {
            out.push(s.clone());
        }
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                collect(v, Some(k), out);
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                collect(item, key, out);
            }
        }
        _ => {}
    }
}

/// The port of each `http://` or `https://` address in `text` (80 and 443 when none is written).
fn url_ports(text: &str) -> Vec<u16> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("://") {
        let scheme_start = text[..i]
            .rfind(|c: char| !c.is_ascii_alphanumeric())
            .map_or(0, |j| j + 1);
        let default = match text[scheme_start..i].to_ascii_lowercase().as_str() {
            "http" => 80,
            "https" => 443,
            _ => continue,
        };
        let rest = &text[i + 3..];
        let end = rest
            .find(|c: char| matches!(c, '/' | '"' | '\'' | '?' | '#') || c.is_whitespace())
            .unwrap_or(rest.len());
        let host = &rest[..end];
        let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
        let port = match host.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(':') && !p.contains(']') => p.parse().ok(),
            _ => Some(default),
        };
        out.extend(port.filter(|p| *p > 0));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_providers_port_is_read_from_its_address() {
        assert_eq!(url_ports("http://127.0.0.1:41234/v1"), [41234]);
        assert_eq!(url_ports("https://api.example.com/v1"), [443]);
        assert_eq!(url_ports("http://user:pw@[::1]:8080/"), [8080]);
        assert!(url_ports("postgres://db:5432/app").is_empty());
    }

    #[test]
    fn only_settings_that_say_where_requests_go_count_not_any_address_mentioned() {
        let opencode = r#"{
            // a comment, as OpenCode's JSONC allows
            "$schema": "https://opencode.ai/config.json",
            "provider": {"fake": {"options": {"baseURL": "http://127.0.0.1:41234/v1",},},},
            "mcp": {"db": {"type": "remote", "url": "http://127.0.0.1:5432"}},
            "instructions": ["see http://127.0.0.1:22 for more"],
        }"#;
        assert_eq!(
            provider_urls(Path::new("opencode.jsonc"), opencode),
            ["http://127.0.0.1:41234/v1"]
        );
        let claude =
            r#"{"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9001", "DOCS": "http://h:22"}}"#;
        assert_eq!(
            provider_urls(Path::new("settings.json"), claude),
            ["http://127.0.0.1:9001"]
        );
        let codex = "[model_providers.fake]\nbase_url = \"http://127.0.0.1:9002/v1\"\nname = \"http://x:23\"\n";
        assert_eq!(
            provider_urls(Path::new("config.toml"), codex),
            ["http://127.0.0.1:9002/v1"]
        );
    }
}
