//! Tells the build which commit it is built from, for `runbook --version`: the commit recorded
//! in `.cargo_vcs_info.json` when built from a packaged crate (crates.io, `cargo install`), else
//! the commit of the git repository whose top is this crate, else none (`unknown commit`). It
//! never fails the build.
#![allow(
    clippy::print_stdout,
    clippy::disallowed_macros,
    reason = "a build script talks to cargo on stdout"
)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let commit = from_package(&dir).or_else(|| from_git(&dir));
    println!(
        "cargo:rustc-env=RUNBOOK_COMMIT={}",
        commit.as_deref().unwrap_or("")
    );
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=RUNBOOK_TARGET={target}");
}

/// The commit `cargo package` recorded: `{"git": {"sha1": "…"}}`.
fn from_package(dir: &Path) -> Option<String> {
    let info = dir.join(".cargo_vcs_info.json");
    let text = std::fs::read_to_string(&info).ok()?;
    println!("cargo:rerun-if-changed={}", info.display());
    let rest = &text[text.find("\"sha1\"")? + 6..];
    let start = rest.find('"')? + 1;
    let len = rest[start..].find('"')?;
    short(&rest[start..start + len])
}

/// HEAD of the repository this crate is the top of (not of one that merely holds it).
fn from_git(dir: &Path) -> Option<String> {
    let top = git(dir, &["rev-parse", "--show-toplevel"])?;
    if Path::new(&top).canonicalize().ok()? != dir.canonicalize().ok()? {
        return None;
    }
    // Built again when HEAD moves: its file, the branch it names, and the packed refs.
    let mut watched = vec![git(dir, &["rev-parse", "--git-path", "HEAD"])?];
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        watched.extend(git(dir, &["rev-parse", "--git-path", &branch]));
    }
    watched.extend(git(dir, &["rev-parse", "--git-path", "packed-refs"]));
    for path in watched {
        let path = dir.join(path);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    short(&git(dir, &["rev-parse", "HEAD"])?)
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

/// The first ten hex digits of a commit id, or nothing if it is not one.
fn short(sha: &str) -> Option<String> {
    let ok = sha.len() >= 10 && sha.bytes().all(|b| b.is_ascii_hexdigit());
    ok.then(|| sha[..10].to_ascii_lowercase())
}
