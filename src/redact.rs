//! Keeps secrets out of everything runbook writes: the values of environment variables whose names
//! look like keys, tokens, secrets or passwords, and every value runbook sets in the agent's
//! environment, are replaced wherever they appear, however JSON spells them.
//!
//! Masking is done on text as written, before any JSON in it is read: the plain value and its
//! usual JSON spelling are found directly (the fast path); text with a `\u` or `\/` escape,
//! which may spell a value another way, is also decoded and a value found in the decoded text
//! is masked where it was written. So every string read from a masked line is masked too.

pub(crate) mod beneath;
pub(crate) mod capped;
mod escapes;
mod masked;
pub(crate) mod pump;
pub(crate) mod write;

pub(crate) use masked::{Masked, MaskedBuf, MaskedStream};
pub(crate) use write::MaskedWriter;

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};

use aho_corasick::{AhoCorasick, MatchKind};

/// What a secret is replaced with. No quotes or backslashes, so JSON stays valid.
pub(crate) const MASK: &str = "[REDACTED]";

/// Shorter values are not treated as secrets: masking `1` or `true` everywhere would garble output.
const MIN_SECRET_LEN: usize = 6;

/// Name fragments that mark a variable as secret (matched case-insensitively).
const SECRET_MARKERS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "PRIVATE",
];

/// Finds and masks secret values.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    matcher: Option<AhoCorasick>,
    longest: usize,
    /// The values it masks, so that another masker can be made of these and more.
    values: Vec<String>,
}

/// What this process masks wherever it writes: the secrets of its environment, and every value a
/// run in it set for its agent. It only grows: masking more is never wrong.
static CURRENT: Mutex<Option<Arc<Redactor>>> = Mutex::new(None);

/// The masker every writer of this process uses (see [`remember`]).
pub(crate) fn current() -> Arc<Redactor> {
    let mut current = CURRENT.lock().unwrap_or_else(PoisonError::into_inner);
    Arc::clone(current.get_or_insert_with(|| Arc::new(Redactor::for_agent([]))))
}

/// Adds what `redactor` masks to what every writer of this process masks from now on.
pub(crate) fn remember(redactor: &Redactor) {
    let mut current = CURRENT.lock().unwrap_or_else(PoisonError::into_inner);
    let known = current.get_or_insert_with(|| Arc::new(Redactor::for_agent([])));
    if redactor.values.iter().all(|v| known.values.contains(v)) {
        return;
    }
    let values = known.values.iter().chain(&redactor.values).cloned();
    *current = Some(Arc::new(Redactor::from_values(values)));
}

/// Adds `secrets` (a credential obtained while runbook runs) to what every writer of this
/// process masks from now on; cheap when they are all masked already.
pub(crate) fn remember_secrets<'a>(secrets: impl IntoIterator<Item = &'a str>) {
    let mut current = CURRENT.lock().unwrap_or_else(PoisonError::into_inner);
    let known = current.get_or_insert_with(|| Arc::new(Redactor::for_agent([])));
    let new: Vec<String> = secrets
        .into_iter()
        .filter(|s| s.len() >= MIN_SECRET_LEN && !known.values.iter().any(|v| v == s))
        .map(str::to_owned)
        .collect();
    if new.is_empty() {
        return;
    }
    let values = known.values.iter().cloned().chain(new);
    *current = Some(Arc::new(Redactor::from_values(values)));
}

/// The values of the variables whose names say they are secret.
fn secret_values(vars: impl IntoIterator<Item = (String, String)>) -> impl Iterator<Item = String> {
    vars.into_iter()
        .filter(|(name, _)| is_secret_name(name))
        .map(|(_, value)| value)
}

/// Whether an environment variable's name says its value is secret.
pub(crate) fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    // Socket paths (SSH_AUTH_SOCK) name where a secret lives, not the secret.
    !upper.ends_with("_SOCK") && SECRET_MARKERS.iter().any(|m| upper.contains(m))
}

impl Redactor {
    /// Masks the secrets of this process's environment (which the agent inherits), and every
    /// value runbook sets in the agent's environment, secret-looking name or not.
    pub(crate) fn for_agent<'a>(set: impl IntoIterator<Item = &'a str>) -> Self {
        let inherited = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
        Self::from_values(secret_values(inherited).chain(set.into_iter().map(str::to_owned)))
    }

    #[cfg(test)]
    pub(crate) fn from_vars(vars: impl IntoIterator<Item = (String, String)>) -> Self {
        Self::from_values(secret_values(vars))
    }

    fn from_values(values: impl IntoIterator<Item = String>) -> Self {
        let mut patterns: Vec<String> = Vec::new();
        let mut kept: Vec<String> = Vec::new();
        for value in values {
            if value.len() < MIN_SECRET_LEN {
                continue;
            }
            kept.push(value.clone());
            // Inside JSON output the value appears escaped; mask both spellings.
            let quoted = serde_json::to_string(&value).unwrap_or_default();
            let escaped = quoted
                .get(1..quoted.len().saturating_sub(1))
                .unwrap_or_default();
            if escaped != value {
                patterns.push(escaped.to_owned());
            }
            patterns.push(value);
        }
        patterns.sort();
        patterns.dedup();
        let longest = patterns.iter().map(String::len).max().unwrap_or(0);
        if patterns.is_empty() {
            return Self::default();
        }
        let matcher = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .expect("plain string patterns always build");
        kept.sort();
        kept.dedup();
        Self {
            matcher: Some(matcher),
            longest,
            values: kept,
        }
    }

    /// The bytes with every secret masked, in any spelling; borrowed when there was nothing to
    /// mask.
    pub(crate) fn bytes<'a>(&self, input: &'a [u8]) -> Cow<'a, [u8]> {
        let Some(m) = &self.matcher else {
            return Cow::Borrowed(input);
        };
        if !escapes::may_hide(input) {
            if !m.is_match(input) {
                return Cow::Borrowed(input);
            }
            let masks = vec![MASK.as_bytes(); m.patterns_len()];
            return Cow::Owned(m.replace_all_bytes(input, &masks));
        }
        // Every spelling at once, on the text as written: a plain match may begin inside an
        // escape, which it then covers whole.
        let mut spans: Vec<std::ops::Range<usize>> = m
            .find_iter(input)
            .map(|f| escapes::whole(input, f.range()))
            .collect();
        spans.extend(escapes::spans(m, input));
        if spans.is_empty() {
            return Cow::Borrowed(input);
        }
        spans.sort_by_key(|r| r.start);
        Cow::Owned(escapes::replace(input, &spans, MASK.as_bytes()))
    }

    /// The bytes masked, as the masking writer takes them.
    pub(crate) fn mask<'a>(&self, input: &'a [u8]) -> Masked<'a> {
        Masked::by(self, input)
    }

    pub(crate) fn str<'a>(&self, input: &'a str) -> Cow<'a, str> {
        match self.bytes(input.as_bytes()) {
            Cow::Borrowed(_) => Cow::Borrowed(input),
            // Whole characters and whole escapes are replaced by ASCII: still UTF-8.
            Cow::Owned(bytes) => Cow::Owned(
                String::from_utf8(bytes)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            ),
        }
    }

    /// A position in `buf` where it can be cut without splitting a secret that is, or may turn
    /// out to be once more bytes arrive, in it, in any spelling, nor an escape. `buf` must not
    /// begin inside an escape (it begins where the last cut was).
    pub(crate) fn safe_cut(&self, buf: &[u8]) -> usize {
        let Some(m) = &self.matcher else {
            return buf.len();
        };
        let longest = self.longest * escapes::MAX_SPELLING;
        let mut cut = buf.len().saturating_sub(longest.saturating_sub(1));
        let mut found: Vec<std::ops::Range<usize>> = m.find_iter(buf).map(|f| f.range()).collect();
        if escapes::may_hide(buf) {
            found.extend(escapes::spans(m, buf));
            found.sort_by_key(|r| r.start);
        }
        for span in found {
            if span.start < cut && span.end > cut {
                cut = span.end;
            }
        }
        escapes::escape_boundary(buf, cut)
    }

    /// Whether there is anything to mask at all.
    pub(crate) fn is_active(&self) -> bool {
        self.matcher.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor() -> Redactor {
        Redactor::from_vars([
            ("OPENAI_API_KEY".to_owned(), "sk-live-abc123".to_owned()),
            ("GITHUB_TOKEN".to_owned(), "ghp_\"quoted\"".to_owned()),
            ("DB_PASSWORD".to_owned(), "123".to_owned()),
            ("SSH_AUTH_SOCK".to_owned(), "/tmp/ssh-agent.sock".to_owned()),
            ("HOME".to_owned(), "/home/someone".to_owned()),
        ])
    }

    #[test]
    fn secret_values_are_masked_raw_and_json_escaped() {
        let r = redactor();
        assert_eq!(r.str("key=sk-live-abc123!"), "key=[REDACTED]!");
        let json = serde_json::to_string("tok ghp_\"quoted\"").unwrap();
        assert_eq!(r.str(&json), r#""tok [REDACTED]""#);
        assert_eq!(&*r.bytes(b"x sk-live-abc123 y"), b"x [REDACTED] y");
    }

    #[test]
    fn a_plain_match_that_begins_inside_an_escape_masks_the_whole_escape() {
        let r = Redactor::from_vars([("API_KEY".to_owned(), "0abcdef1".to_owned())]);
        let masked = r.str(r#"{"output":"\u0030abcdef1","n":1}"#);
        assert_eq!(masked, r#"{"output":"[REDACTED]","n":1}"#);
        let masked = r.str(r#"{"output":"\u00300abcdef1"}"#);
        assert!(
            serde_json::from_str::<serde_json::Value>(&masked).is_ok(),
            "{masked}"
        );
        assert!(!masked.contains("abcdef1"), "{masked}");
    }

    #[test]
    fn a_cut_never_splits_a_secret() {
        let r = redactor();
        let buf = b"aaaaaaaaaaaaaaaaaaaasecret: sk-live-abc123";
        let cut = r.safe_cut(buf);
        assert!(cut <= buf.len() - "sk-live-abc123".len() || cut == buf.len());
        let split = b"aaaaaaaaaaaaaaaaaaaaaaaaaasecret: sk-live-ab";
        assert!(
            r.safe_cut(split) <= split.len() - "sk-live-ab".len(),
            "a possible secret prefix is held back"
        );
    }

    #[test]
    fn every_value_set_for_the_agent_is_masked_whatever_its_name() {
        let r = Redactor::for_agent(["postgres://u:pw@db/app", "1"]);
        assert_eq!(r.str("url=postgres://u:pw@db/app"), "url=[REDACTED]");
        assert_eq!(r.str("n=1"), "n=1", "too short to be worth masking");
    }

    #[test]
    fn what_a_run_sets_is_remembered_for_every_writer_of_the_process() {
        remember(&Redactor::for_agent(["remembered-value-1"]));
        remember(&Redactor::for_agent(["remembered-value-2"]));
        let masked = current()
            .str("a remembered-value-1 b remembered-value-2")
            .into_owned();
        assert_eq!(masked, "a [REDACTED] b [REDACTED]");
    }

    #[test]
    fn a_credential_obtained_later_is_masked_by_every_writer_from_then_on() {
        assert!(
            current()
                .str("key fetched-later-9Qx")
                .contains("fetched-later-9Qx")
        );
        remember_secrets(["fetched-later-9Qx", "short"]);
        let before = current();
        remember_secrets(["fetched-later-9Qx"]);
        assert!(
            Arc::ptr_eq(&before, &current()),
            "nothing new: kept as it was"
        );
        assert_eq!(current().str("key fetched-later-9Qx"), "key [REDACTED]");
        assert_eq!(
            current().str("short"),
            "short",
            "too short to be worth masking"
        );
    }

    #[test]
    fn ordinary_and_short_values_are_left_alone() {
        let r = redactor();
        assert!(matches!(
            r.str("/home/someone and /tmp/ssh-agent.sock and 123"),
            Cow::Borrowed(_)
        ));
        assert!(!Redactor::from_vars([("PATH".to_owned(), "/usr/bin".to_owned())]).is_active());
    }

    #[test]
    fn a_secret_spelled_with_escapes_is_masked_and_the_line_stays_json() {
        let r = redactor();
        let line = r#"{"output":"key \u0073k-live-\u0061bc123 and sk\u002dlive\u002dabc123"}"#;
        let masked = r.str(line);
        assert_eq!(masked, r#"{"output":"key [REDACTED] and [REDACTED]"}"#);
        let slash = Redactor::for_agent(["https://user:pw@host/x"]);
        assert_eq!(
            slash.str(r#""https:\/\/user:pw@host\/x""#),
            r#""[REDACTED]""#
        );
        assert!(matches!(
            r.str(r#"{"text":"\u001b[31mred\u001b[0m"}"#),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_cut_never_splits_a_secret_spelled_with_escapes() {
        let r = redactor();
        let spelled =
            r"\u0073\u006b\u002d\u006c\u0069\u0076\u0065\u002d\u0061\u0062\u0063\u0031\u0032\u0033";
        let buf = format!("{}{spelled}{}", "a".repeat(100), "b".repeat(200));
        let cut = r.safe_cut(buf.as_bytes());
        assert!(cut <= 100 || cut >= 100 + spelled.len(), "{cut}");
        let (done, rest) = buf.split_at(cut);
        assert!(!r.str(done).contains("0073") || r.str(done).contains("[REDACTED]"));
        assert!(
            r.str(&format!("{}{}", r.str(done), r.str(rest)))
                .contains("[REDACTED]")
        );
        let tail = format!("{}{}", "a".repeat(300), &spelled[..30]);
        assert!(
            r.safe_cut(tail.as_bytes()) <= 300,
            "a possible secret spelling is held back"
        );
    }

    mod spellings {
        //! Every JSON spelling of a secret, inside any JSON string, is masked: the masked line
        //! reads back as JSON (when the spelling was valid JSON) without the secret in it.

        use proptest::prelude::*;

        use super::super::{MASK, Redactor};

        /// Characters secrets are made of here, the awkward ones included.
        fn secret_char() -> impl Strategy<Value = char> {
            prop_oneof![
                4 => proptest::char::range('a', 'z'),
                2 => proptest::char::range('0', '9'),
                1 => prop::sample::select(vec!['/', '"', '\\', '-', '_', ':', '@', '+', '=', '\t']),
                1 => prop::sample::select(vec!['é', 'ß', '中', '😀', '\u{1}']),
            ]
        }

        /// One character as JSON may write it inside a string.
        fn spell(c: char, how: u8) -> String {
            let mut units = [0u16; 2];
            let escaped: String = c
                .encode_utf16(&mut units)
                .iter()
                .map(|u| {
                    if how.is_multiple_of(2) {
                        format!("\\u{u:04x}")
                    } else {
                        format!("\\u{u:04X}")
                    }
                })
                .collect();
            match (c, how % 4) {
                ('/', 1) => "\\/".to_owned(),
                (_, 0 | 1) => escaped,
                _ => {
                    let canonical = serde_json::to_string(&c.to_string()).unwrap();
                    canonical[1..canonical.len() - 1].to_owned()
                }
            }
        }

        proptest! {
            #[test]
            fn every_spelling_of_a_secret_is_masked(
                secret in proptest::collection::vec(secret_char(), 6..20),
                hows in proptest::collection::vec(any::<u8>(), 20),
                before in "[ a-z]{0,8}",
                after in "[ a-z]{0,8}",
            ) {
                let secret: String = secret.into_iter().collect();
                let spelled: String = secret
                    .chars()
                    .zip(hows.iter().cycle())
                    .map(|(c, &how)| spell(c, how))
                    .collect();
                let line = format!(r#"{{"output":"{before}{spelled}{after}","n":1}}"#);
                let decoded: serde_json::Value = serde_json::from_str(&line).unwrap();
                prop_assert_eq!(
                    decoded["output"].as_str().unwrap(),
                    format!("{before}{secret}{after}")
                );
                let r = Redactor::for_agent([secret.as_str()]);
                let masked = r.str(&line);
                let read: serde_json::Value = serde_json::from_str(&masked)
                    .map_err(|e| TestCaseError::fail(format!("{e}: {masked}")))?;
                let output = read["output"].as_str().unwrap();
                prop_assert!(!output.contains(&secret), "{} in {}", secret, masked);
                prop_assert!(output.contains(MASK), "{}", masked);
                prop_assert_eq!(&read["n"], &serde_json::json!(1));
            }
        }
    }
}
