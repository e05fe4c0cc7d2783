//! Configuration errors: one line saying where (file, line and column, or the variable or flag)
//! and what was expected. They are usage errors: nothing has been started.

use std::path::Path;

use crate::exit;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{place}: {message}")]
pub(crate) struct ConfigError {
    place: String,
    message: String,
}

impl ConfigError {
    /// An error at byte `offset` of `text`, the content of `file`.
    pub(crate) fn at(file: &Path, text: &str, offset: usize, message: impl Into<String>) -> Self {
        let (line, column) = line_column(text, offset);
        Self::new(format!("{}:{line}:{column}", file.display()), message)
    }

    /// An error at a 1-based line and column of `file`.
    pub(crate) fn at_line(file: &Path, line: u32, column: u32, message: impl Into<String>) -> Self {
        Self::new(format!("{}:{line}:{column}", file.display()), message)
    }

    /// An error about a whole file (it cannot be read).
    pub(crate) fn file(file: &Path, message: impl Into<String>) -> Self {
        Self::new(file.display().to_string(), message)
    }

    /// An error about an environment variable or a flag.
    pub(crate) fn named(name: &str, message: impl Into<String>) -> Self {
        Self::new(name.to_owned(), message)
    }

    /// What is wrong, without where.
    pub(crate) fn message(&self) -> &str {
        &self.message
    }

    fn new(place: String, message: impl Into<String>) -> Self {
        // One line, whatever the message (TOML parse errors can span several).
        let message = message.into();
        let message = message
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        Self { place, message }
    }
}

impl From<ConfigError> for exit::Error {
    fn from(e: ConfigError) -> Self {
        exit::Error::Usage(e.to_string())
    }
}

/// The 1-based line and column (in characters) of byte `offset` in `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (u32, u32) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (to_u32(line), to_u32(column))
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_become_lines_and_character_columns() {
        let text = "a = 1\nbé = \"x\"\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 4), (1, 5));
        assert_eq!(line_column(text, 6), (2, 1));
        // After a two-byte character the column counts characters, not bytes.
        assert_eq!(line_column(text, text.rfind('=').unwrap()), (2, 4));
        assert_eq!(line_column(text, 1000), (3, 1));
    }

    #[test]
    fn an_error_is_one_line() {
        let e = ConfigError::at(Path::new("/r/runbook.toml"), "x\ny", 2, "bad\n  thing");
        assert_eq!(e.to_string(), "/r/runbook.toml:2:1: bad thing");
    }
}
