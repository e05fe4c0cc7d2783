//! Short, one-line summaries of tool inputs and errors for humans (a path, a command, a pattern).

use std::borrow::Cow;
use std::path::Path;

use super::relative_to;
/// Inputs and errors are cut the way the views cut text.
pub(crate) use crate::format::{first_line, truncate};

/// Longest summary kept, in characters.
const MAX_CHARS: usize = 120;

/// The fields of a tool input that say what the call is about, whatever the agent calls them.
#[derive(Debug, Default)]
pub(crate) struct InputFields<'a> {
    pub path: Option<&'a str>,
    pub command: Option<&'a str>,
    pub pattern: Option<&'a str>,
    pub description: Option<&'a str>,
    pub url: Option<&'a str>,
    pub todos: Option<usize>,
}

/// A one-line summary of a tool call's input.
pub(crate) fn summarize(fields: &InputFields<'_>, title: Option<&str>, cwd: &Path) -> String {
    let text: Cow<'_, str> = if let Some(command) = fields.command {
        first_line(command).into()
    } else if let Some(path) = fields.path {
        let rel = relative_to(path, cwd);
        match fields.pattern {
            Some(p) => format!("{p} in {rel}").into(),
            None => rel.into(),
        }
    } else if let Some(p) = fields.pattern {
        p.into()
    } else if let Some(d) = fields.description {
        d.into()
    } else if let Some(u) = fields.url {
        u.into()
    } else if let Some(n) = fields.todos {
        format!("{n} todo{}", if n == 1 { "" } else { "s" }).into()
    } else {
        title.unwrap_or_default().into()
    };
    // Most summaries are short: made once, not copied again to be cut.
    match text.char_indices().nth(MAX_CHARS) {
        None => text.into_owned(),
        Some(_) => truncate(&text, MAX_CHARS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_prefer_the_command_then_a_relative_path() {
        let cwd = Path::new("/work/repo");
        let bash = InputFields {
            command: Some("cargo test\n--quiet"),
            ..Default::default()
        };
        let read = |path| InputFields {
            path: Some(path),
            ..Default::default()
        };
        let grep = InputFields {
            pattern: Some("fn main"),
            path: Some("/work/repo/src"),
            ..Default::default()
        };
        for (fields, summary) in [
            (bash, "cargo test"),
            (read("/work/repo/src/main.rs"), "src/main.rs"),
            (read("/etc/passwd"), "/etc/passwd"),
            (grep, "fn main in src"),
        ] {
            assert_eq!(summarize(&fields, None, cwd), summary);
        }
        assert_eq!(
            summarize(&InputFields::default(), Some("3 todos"), cwd),
            "3 todos"
        );
    }

    #[test]
    fn long_inputs_are_cut_on_a_character_boundary() {
        let long = "é".repeat(200);
        let cut = truncate(&long, MAX_CHARS);
        assert_eq!(cut.chars().count(), MAX_CHARS + 1);
        assert!(cut.ends_with('…'));
    }
}
