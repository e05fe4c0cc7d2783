//! Where the task file is, as a script or a workflow names it: relative to the root of the git
//! repository holding it (a runner's or a cluster's checkout is the repository, wherever the
//! shell that ran `runbook fleet` stood), written with `/`.

use std::path::{Component, Path};

use crate::exit::Error;

/// `file`'s path from the top of its repository; a usage error when it is in none.
pub(super) fn relative(file: &Path) -> Result<String, Error> {
    let shown = || crate::trust::escape(&file.display().to_string());
    let absolute = file
        .canonicalize()
        .map_err(|e| Error::Usage(format!("cannot read {}: {e}", shown())))?;
    let dir = absolute.parent().unwrap_or(&absolute);
    let top = crate::git::Git::find(dir)
        .and_then(|git| git.line(&["rev-parse", "--show-toplevel"]))
        .ok()
        .and_then(|top| Path::new(&top).canonicalize().ok());
    let Some(top) = top else {
        return Err(outside(&shown()));
    };
    let Ok(inner) = absolute.strip_prefix(&top) else {
        return Err(outside(&shown()));
    };
    let parts: Option<Vec<&str>> = inner
        .components()
        .map(|c| match c {
            Component::Normal(part) => part.to_str(),
            _ => None,
        })
        .collect();
    match parts {
        Some(parts) if !parts.is_empty() => Ok(parts.join("/")),
        _ => Err(outside(&shown())),
    }
}

fn outside(shown: &str) -> Error {
    Error::Usage(format!(
        "the task file {shown} is not in a git repository: each task runs in the repository's checkout, where it reads the file; move the file into the repository"
    ))
}
