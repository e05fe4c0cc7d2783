//! What a store said when a request failed, as runbook tells it: the store's message quotes the
//! server's answer, which is foreign text (it may echo the signed request, hold many lines or
//! escape sequences), so it is masked, made one line with every control character shown, and
//! cut.

use std::fmt::Display;

/// The most characters of a store's message told.
const MAX_CHARS: usize = 400;

/// `error` as one line of at most [`MAX_CHARS`] characters, secrets masked.
pub(crate) fn said(error: impl Display) -> String {
    let text = error.to_string();
    let masked = crate::redact::current().str(&text).into_owned();
    let words: Vec<&str> = masked.split_whitespace().collect();
    let joined = words.join(" ");
    // Masked before it is cut, so that no part of a secret is left at the cut.
    crate::format::truncate(&crate::foreign::term::escape_line(&joined), MAX_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_answer_is_told_on_one_short_line_without_controls() {
        let answer = format!(
            "403 Forbidden: \u{1b}[2J<Error>\r\n  <Code>AccessDenied</Code>\n\u{7}\u{9b}31m{}",
            "x".repeat(5_000)
        );
        let told = said(answer);
        assert!(!told.chars().any(char::is_control), "{told:?}");
        assert!(
            told.starts_with("403 Forbidden: \\e[2J<Error> <Code>AccessDenied</Code>"),
            "{told}"
        );
        assert!(told.chars().count() <= MAX_CHARS + 1 && told.ends_with('…'));
    }
}
