//! OpenCode's two generations in one home: 1.x and 2.x keep their data under the same XDG
//! directories and cannot share a database, so doctor says when both are installed or when the
//! home holds the other generation's database (read from its file, the agent not run).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use super::{Finding, Problem};
use crate::agent::versions;
use crate::files;

/// How much of the database is read for its tables' names: SQLite keeps them on its first pages.
const SCHEMA_BYTES: u64 = 1 << 20;
/// The error a 1.x run gives in a home whose database is 2.x's.
const CLASH: &str = "Database is not empty and has no session table";

/// Adds to the native OpenCode finding the problem of a home two generations would share.
pub(super) fn shared_home(findings: &mut [Finding], env: &[(String, String)]) {
    let var = |name: &str| {
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(name).ok())
            .filter(|v| !v.is_empty())
    };
    let Some(f) = findings
        .iter_mut()
        .find(|f| f.agent == "opencode" && f.via == "native")
    else {
        return;
    };
    let Some(major) = f.version.as_deref().and_then(versions::major) else {
        return;
    };
    let data = var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|h| Path::new(&h).join(".local/share")));
    let db = data.map(|d| d.join("opencode/opencode.db"));
    let other = match major {
        1 => on_path(var("PATH").as_deref(), "opencode2")
            .map(|p| format!("OpenCode 2.x ({}) is installed too", p.display())),
        _ => None,
    };
    let other = other.or_else(|| {
        let db = db.as_deref()?;
        let db_major = generation_of(db)?;
        (db_major != major.min(2)).then(|| {
            format!(
                "{} is OpenCode {db_major}.x's database",
                crate::foreign::term::escape(&db.display().to_string())
            )
        })
    });
    if let Some(other) = other {
        f.problems.push(Problem::new(
            format!(
                "{other}: OpenCode {major}.x uses the same home (XDG data and state directories), and the two cannot share one database (`{CLASH}`)"
            ),
            "give each its own XDG_DATA_HOME and XDG_STATE_HOME (or HOME), or uninstall one"
                .to_owned(),
        ));
    }
}

/// `program` in the directories of `path`.
fn on_path(path: Option<&str>, program: &str) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// Which generation's database `db` is, from the tables its schema creates: 1.x has a `session`
/// table, 2.x none. `None` when it is not there or creates no table.
fn generation_of(db: &Path) -> Option<u64> {
    let mut head = Vec::new();
    files::open(db, files::Links::Follow)
        .ok()?
        .take(SCHEMA_BYTES)
        .read_to_end(&mut head)
        .ok()?;
    let text = String::from_utf8_lossy(&head);
    let tables: Vec<&str> = text
        .split("CREATE TABLE")
        .skip(1)
        .filter_map(|rest| {
            let name = rest.trim_start().split(['(', ' ', '\n']).next()?;
            Some(name.trim_matches(['`', '"', '[', ']', '\'']))
        })
        .collect();
    if tables.is_empty() {
        return None;
    }
    Some(if tables.contains(&"session") { 1 } else { 2 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::disallowed_methods, reason = "a test's fixture")]
    fn a_database_is_told_by_its_tables() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("opencode.db");
        let write = |text: &str| std::fs::write(&db, text).unwrap();
        write("SQLite format 3\0...CREATE TABLE `session` (id text)...CREATE TABLE `message` (");
        assert_eq!(generation_of(&db), Some(1));
        write("SQLite format 3\0...CREATE TABLE \"event\" (id)...CREATE TABLE project (");
        assert_eq!(generation_of(&db), Some(2));
        write("SQLite format 3\0");
        assert_eq!(generation_of(&db), None);
        assert_eq!(generation_of(&dir.path().join("none")), None);
    }
}
