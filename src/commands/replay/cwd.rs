//! The directory a raw transcript was recorded in, so that its paths are shown relative to it as
//! the live run showed them: the one the agent's own lines name (`cwd`), else the deepest
//! directory holding every absolute file path its tool calls name, from the transcript's first
//! lines. A transcript names a directory of the machine it was recorded on: it is only ever used
//! to shorten what is shown, never looked at.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// How many of a transcript's lines are read to find it.
const LINES: usize = 512;

/// The keys whose value is the agent's working directory.
const CWD_KEYS: [&str; 2] = ["cwd", "working_directory"];
/// The keys whose value is a file a tool call is about.
const FILE_KEYS: [&str; 3] = ["filePath", "file_path", "path"];

/// The recording's directory, from `lines` (a transcript's first lines), when they tell it.
pub(super) fn recorded(lines: impl Iterator<Item = Vec<u8>>) -> Option<PathBuf> {
    let mut common: Option<PathBuf> = None;
    for line in lines.take(LINES) {
        let Ok(value) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let mut found = Found::default();
        walk(&value, 0, &mut found);
        if let Some(cwd) = found.cwd {
            return Some(cwd);
        }
        for file in found.files {
            let dir = file.parent().unwrap_or(&file).to_path_buf();
            common = Some(match common {
                None => dir,
                Some(c) => shared(&c, &dir),
            });
        }
    }
    common.filter(|c| c.components().count() > 1)
}

#[derive(Default)]
struct Found {
    cwd: Option<PathBuf>,
    files: Vec<PathBuf>,
}

/// Looks through `value` (to a bounded depth) for a working directory and absolute file paths.
fn walk(value: &Value, depth: usize, found: &mut Found) {
    if depth > 8 {
        return;
    }
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                let absolute = v.as_str().map(Path::new).filter(|p| p.is_absolute());
                match absolute {
                    Some(p) if CWD_KEYS.contains(&key.as_str()) => {
                        found.cwd.get_or_insert_with(|| p.to_path_buf());
                    }
                    Some(p) if FILE_KEYS.contains(&key.as_str()) => found.files.push(p.into()),
                    _ => walk(v, depth + 1, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| walk(v, depth + 1, found)),
        _ => {}
    }
}

/// The deepest directory holding both `a` and `b`.
fn shared(a: &Path, b: &Path) -> PathBuf {
    a.components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> impl Iterator<Item = Vec<u8>> + '_ {
        text.lines().map(|l| l.as_bytes().to_vec())
    }

    #[test]
    fn the_files_a_transcript_names_tell_where_it_was_recorded() {
        let text = "{\"part\":{\"state\":{\"input\":{\"filePath\":\"/rec/work/README.md\"}}}}\n\
            not json\n{\"part\":{\"state\":{\"input\":{\"filePath\":\"/rec/work/src/a.rs\"}}}}";
        assert_eq!(recorded(lines(text)), Some(PathBuf::from("/rec/work")));
        let said = "{\"type\":\"system\",\"cwd\":\"/home/me/app\"}\n{\"file_path\":\"/tmp/x\"}";
        assert_eq!(recorded(lines(said)), Some(PathBuf::from("/home/me/app")));
        // Relative paths, or files with nothing but `/` in common, tell nothing.
        assert_eq!(recorded(lines("{\"path\":\"src/a.rs\"}")), None);
        assert_eq!(
            recorded(lines("{\"path\":\"/a/x\"}\n{\"path\":\"/b/y\"}")),
            None
        );
    }
}
