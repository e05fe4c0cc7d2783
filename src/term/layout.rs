//! The one layout of every line runbook prints for a person, whichever command prints it: a
//! line wider than the terminal is broken into rows between words (see [`super::wrap`]), the
//! rows after the first indented under the line's text, past its leading mark (`✓`, `error:`,
//! `HOLD`); a word too wide for that (a path) gets a row of its own and is never split. Where
//! no width is known (output piped to a file or a program), every line is left whole.

use std::borrow::Cow;

use super::wrap::wrap;

/// The widest a leading label (`warning:`, `receipt:`) may be and still set the indent.
const LABEL_MAX: usize = 12;

/// `text` (one line or several) laid out for `width` columns; as it is when `width` is `None`
/// or every line fits.
pub(crate) fn lay_out(text: &str, width: Option<usize>) -> Cow<'_, str> {
    let Some(width) = width else {
        return Cow::Borrowed(text);
    };
    if text
        .split('\n')
        .all(|line| console::measure_text_width(line) <= width)
    {
        return Cow::Borrowed(text);
    }
    let lines: Vec<String> = text
        .split('\n')
        .map(|line| rows(line, width).join("\n"))
        .collect();
    Cow::Owned(lines.join("\n"))
}

/// One logical line as the rows that show it in `width` columns.
pub(crate) fn rows(line: &str, width: usize) -> Vec<String> {
    wrap(line, width, 0, hanging(line, width))
}

/// The column the rows after the first start at: under the line's text, past its leading
/// spaces and its mark (a symbol such as `✓` or `│`, a label such as `error:` or `HOLD`);
/// two columns in from the line's start when it has no mark. Never past half the width.
pub(crate) fn hanging(line: &str, width: usize) -> usize {
    let plain = console::strip_ansi_codes(line);
    let lead = plain.len() - plain.trim_start_matches(' ').len();
    let rest = &plain[lead..];
    let first = rest.split(' ').next().unwrap_or_default();
    let after = rest[first.len()..].len() - rest[first.len()..].trim_start_matches(' ').len();
    let indent = if is_mark(first) && after > 0 && first.len() < rest.len() - after {
        lead + console::measure_text_width(first) + after
    } else {
        lead + 2
    };
    if indent * 2 > width {
        (lead + 2).min(width / 2)
    } else {
        indent
    }
}

/// Whether a line's first word marks it rather than begins its text: a symbol (no letter or
/// digit), a short label ending in `:`, or a short word in capitals (`HOLD`, `DONE`).
fn is_mark(word: &str) -> bool {
    let width = console::measure_text_width(word);
    if word.is_empty() || width > LABEL_MAX {
        return false;
    }
    let symbol = !word.chars().any(char::is_alphanumeric);
    let label = word.ends_with(':') && !word.contains('/');
    let capitals = width <= 6 && word.chars().all(|c| c.is_ascii_uppercase());
    symbol || label || capitals
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_after_the_first_start_under_the_text_past_its_mark() {
        let line = " HOLD budget: $0.0000 spent and $0.2000 held by the running tasks; the next task could cross $0.2200";
        let rows = rows(line, 60);
        assert_eq!(
            rows[0],
            " HOLD budget: $0.0000 spent and $0.2000 held by the running"
        );
        assert!(
            rows[1..]
                .iter()
                .all(|r| r.starts_with("      ") && !r.starts_with("       "))
        );
        assert_eq!(hanging("error: the task file cannot be read", 80), 7);
        assert_eq!(hanging("  ✓ done", 80), 4);
        assert_eq!(hanging("Next, try it on your own repository", 80), 2);
    }

    #[test]
    fn a_path_gets_a_row_of_its_own_and_nothing_is_laid_out_without_a_width() {
        let path = "/tmp/a-long-directory/batches/20261123-abcdef/batch.json";
        let line = format!("record: {path}");
        assert_eq!(lay_out(&line, Some(50)), format!("record:\n{path}"));
        assert_eq!(lay_out(&line, Some(70)), line);
        assert_eq!(lay_out(&line, None), line);
        assert_eq!(
            lay_out("a\nb c d e f g h i j k l m n o p q r s t u v", Some(20)),
            "a\nb c d e f g h i j k\n  l m n o p q r s t\n  u v"
        );
    }
}
