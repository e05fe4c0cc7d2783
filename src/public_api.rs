//! The library's public surface, listed in `docs/public-api.txt` with the version it belongs to,
//! so that it changes only on purpose: a test fails when the list differs, and refreshing it
//! (`RUNBOOK_BLESS=1 cargo test public_api`) requires a new version in Cargo.toml.
#![allow(
    clippy::disallowed_methods,
    reason = "writes docs/public-api.txt when blessed"
)]

/// The sources of the public items: the crate root's re-exports and every public module.
const SOURCES: [(&str, &str); 8] = [
    ("lib", include_str!("lib.rs")),
    ("event", include_str!("event.rs")),
    ("receipt", include_str!("receipt.rs")),
    ("provenance", include_str!("provenance.rs")),
    ("prices", include_str!("prices.rs")),
    ("library", include_str!("library.rs")),
    ("observers", include_str!("observers/mod.rs")),
    ("exit", include_str!("exit.rs")),
];

/// One line per public item: `module: declaration`, with the variants of public enums and the
/// public functions of `impl` blocks named after their type. Tests and crate-private items are
/// left out.
fn surface() -> Vec<String> {
    let mut items = Vec::new();
    for (module, source) in SOURCES {
        // The item the current block belongs to, when it is public: a struct or enum, or the
        // `impl` of a public type.
        let mut public_types: Vec<String> = Vec::new();
        let mut block: Option<(String, bool)> = None;
        for line in source.lines() {
            let code = line.trim();
            let depth = line.len() - line.trim_start().len();
            // A block opens at the left margin and closes there; comments and attributes
            // between items change nothing.
            if depth == 0 && !code.is_empty() && !code.starts_with("//") && !code.starts_with('#') {
                if code.starts_with("mod tests") {
                    break;
                }
                block = if let Some(rest) = code.strip_prefix("pub enum ") {
                    public_types.push(name(rest).to_owned());
                    Some((name(rest).to_owned(), true))
                } else if let Some(rest) = code.strip_prefix("pub struct ") {
                    public_types.push(name(rest).to_owned());
                    Some((name(rest).to_owned(), false))
                } else if let Some(rest) = code.strip_prefix("impl") {
                    let ty = impl_type(rest);
                    public_types.contains(&ty).then_some((ty, false))
                } else {
                    None
                };
            }
            let declared = code
                .strip_prefix("pub ")
                .filter(|_| !code.starts_with("pub("));
            match (declared, &block, depth) {
                (Some(decl), _, 0) => items.push(format!("{module}: {}", trim(decl))),
                (Some(decl), Some((ty, _)), 4) => {
                    items.push(format!("{module}: {ty}::{}", trim(decl)));
                }
                (None, Some((ty, true)), 4)
                    if code.starts_with(|c: char| c.is_ascii_uppercase()) =>
                {
                    items.push(format!("{module}: {ty}::{}", name(code)));
                }
                _ => {}
            }
        }
    }
    items
}

/// A declaration without what opens or ends it.
fn trim(decl: &str) -> &str {
    decl.trim_end_matches(['{', ',', ';']).trim_end()
}

/// The identifier a declaration starts with.
fn name(decl: &str) -> &str {
    let end = decl
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(decl.len());
    &decl[..end]
}

/// `Run` of `impl Run {`, `impl<T: X> Foo<T> {` and `impl Display for Run {`.
fn impl_type(rest: &str) -> String {
    let rest = rest.trim_start();
    let rest = if rest.starts_with('<') {
        rest.split_once("> ").map_or(rest, |(_, r)| r)
    } else {
        rest
    };
    let ty = rest.rsplit_once(" for ").map_or(rest, |(_, ty)| ty);
    name(ty.trim()).to_owned()
}

#[test]
fn the_public_api_changes_only_with_a_new_version() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/public-api.txt");
    let version = env!("CARGO_PKG_VERSION");
    let listed = std::fs::read_to_string(&path).unwrap_or_default();
    let (listed_version, listed_items) = listed.split_once('\n').unwrap_or_default();
    let listed_items: Vec<&str> = listed_items.lines().collect();
    let now = surface();
    if now == listed_items {
        return;
    }
    let bless = std::env::var_os("RUNBOOK_BLESS").is_some();
    let listed_version = listed_version.trim_start_matches("runbook ");
    assert!(
        bless && (listed_version != version || listed_items.is_empty()),
        "the public API differs from docs/public-api.txt (runbook {listed_version}): if that is on \
         purpose, raise the version in Cargo.toml and run `RUNBOOK_BLESS=1 cargo test public_api`"
    );
    let mut text = format!("runbook {version}\n");
    for item in now {
        text.push_str(&item);
        text.push('\n');
    }
    std::fs::write(&path, text).expect("write docs/public-api.txt");
}

#[test]
fn the_surface_names_types_variants_and_methods() {
    let items = surface();
    for expected in [
        "library: struct Run",
        "library: Run::fn on_event<F>(mut self, observer: F) -> Self",
        "library: Agent::Claude",
        "event: Outcome::ChecksFailed",
        "lib: use library::{Agent, Permissions, Run, RunError}",
        "observers: struct Meta",
        "observers: Meta::run_id: String",
    ] {
        assert!(
            items.iter().any(|i| i == expected),
            "{expected} in {items:#?}"
        );
    }
    assert!(!items.iter().any(|i| i.contains("pub(crate)")));
    assert!(
        !items.iter().any(|i| i.starts_with("observers: Tally")),
        "not public"
    );
}
