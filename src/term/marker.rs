//! runbook's colour markers: the SGR introducer followed by a number drawn at random for this
//! process, which only the terminal writer (`term::out`) makes a colour of.

use std::sync::OnceLock;

/// The number in this process's colour markers: twenty decimal digits in groups of four (the
/// longest parameter `console` reads), so that to every reader of ANSI codes (width measures,
/// line wrapping) a marker is one code of no width.
pub(super) fn nonce() -> &'static str {
    static NONCE: OnceLock<String> = OnceLock::new();
    NONCE.get_or_init(|| {
        // std's hash keys come from the operating system's randomness, fresh for each process.
        let random = std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), 0x5eed_u64);
        let digits = format!("{random:020}");
        let groups: Vec<&str> = (0..20).step_by(4).map(|i| &digits[i..i + 4]).collect();
        groups.join(";")
    })
}

/// runbook's own SGR code `params` (`32`, `1`, `0`…), as a marker only the terminal writer makes a
/// colour of.
pub(crate) fn sgr(params: &str) -> String {
    format!("\x1b[{};{params}m", nonce())
}

/// Makes runbook's own rendering (already free of foreign escape sequences, like termimad's
/// output for escaped text) into markers: each SGR code in `rendered` becomes [`sgr`]'s marker;
/// anything else is left to be escaped. Only for text whose foreign parts were escaped first.
pub(crate) fn own_sgr(rendered: &str) -> String {
    let mut out = String::with_capacity(rendered.len() + 64);
    let mut rest = rendered;
    while let Some(at) = rest.find('\x1b') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match sgr_len(rest) {
            Some(len) => {
                out.push_str(&sgr(&rest[2..len - 1]));
                rest = &rest[len..];
            }
            None => {
                out.push('\x1b');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The length of the SGR code `text` begins with (`ESC [ digits-and-semicolons m`).
fn sgr_len(text: &str) -> Option<usize> {
    let params = text.strip_prefix("\x1b[")?;
    let end = params.find(|c: char| !(c.is_ascii_digit() || c == ';'))?;
    (params.as_bytes()[end] == b'm').then_some(2 + end + 1)
}
