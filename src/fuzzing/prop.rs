//! Property tests over the fuzz targets' entry points, on stable: arbitrary bytes, JSON shaped
//! like each input (keys and values taken from the recorded transcripts and the receipt fixture),
//! and recorded lines with random edits. CI runs `PROPTEST_CASES` (256) cases of each; for a
//! longer search: `PROPTEST_CASES=100000 cargo test --lib prop`.

use std::path::Path;
use std::sync::LazyLock;

use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::ValueTree as _;
use serde_json::{Map, Value};

use super::*;

/// Longest arbitrary input, in bytes; a few times [`LINE_LIMIT`] so overlong lines occur.
const MAX_BYTES: usize = 3 * LINE_LIMIT;

/// Names and values seen in recorded input, for JSON that looks like it.
struct Vocabulary {
    /// Every `type` value.
    types: Vec<String>,
    keys: Vec<String>,
    strings: Vec<String>,
    /// The recorded lines themselves.
    lines: Vec<String>,
}

impl Vocabulary {
    fn of_lines(lines: Vec<String>) -> Self {
        let (mut types, mut keys, mut strings) = (Vec::new(), Vec::new(), Vec::new());
        for line in &lines {
            if let Ok(value) = serde_json::from_str::<Value>(line) {
                collect(&value, &mut types, &mut keys, &mut strings);
            }
        }
        for list in [&mut types, &mut keys, &mut strings] {
            list.sort();
            list.dedup();
            if list.is_empty() {
                list.push(String::new());
            }
        }
        Self {
            types,
            keys,
            strings,
            lines,
        }
    }

    /// An agent's recorded stdout lines.
    fn of_agent(agent: &str) -> Self {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(agent);
        let mut files: Vec<_> = fs::read_dir(dir)
            .expect("the fixtures directory")
            .map(|e| e.expect("a fixture").path())
            .filter(|p| p.to_string_lossy().ends_with(".stdout.ndjson"))
            .collect();
        files.sort();
        let lines = files
            .iter()
            .flat_map(|p| {
                let text = fs::read_to_string(p).expect("a readable fixture");
                text.lines().map(str::to_owned).collect::<Vec<_>>()
            })
            .collect();
        Self::of_lines(lines)
    }
}

fn collect(v: &Value, types: &mut Vec<String>, keys: &mut Vec<String>, strings: &mut Vec<String>) {
    match v {
        Value::String(s) if s.len() <= 64 => strings.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| collect(i, types, keys, strings)),
        Value::Object(map) => {
            for (k, v) in map {
                keys.push(k.clone());
                if let (true, Value::String(t)) = (k == "type", v) {
                    types.push(t.clone());
                }
                collect(v, types, keys, strings);
            }
        }
        _ => {}
    }
}

static OPENCODE: LazyLock<Vocabulary> = LazyLock::new(|| Vocabulary::of_agent("opencode"));
static CLAUDE: LazyLock<Vocabulary> = LazyLock::new(|| Vocabulary::of_agent("claude"));
static CODEX: LazyLock<Vocabulary> = LazyLock::new(|| Vocabulary::of_agent("codex"));
/// Universal events: what the recorded transcripts become, as an event log holds them.
static EVENTS: LazyLock<Vocabulary> = LazyLock::new(|| {
    let mut lines = Vec::new();
    for (agent, adapter) in [
        ("opencode", &OpenCode as &dyn Adapter),
        ("claude", &Claude),
        ("codex", &Codex),
    ] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(agent);
        for entry in fs::read_dir(dir).expect("the fixtures directory") {
            let path = entry.expect("a fixture").path();
            if !path.to_string_lossy().ends_with(".stdout.ndjson") {
                continue;
            }
            let mut run = Run::new(agent, true);
            let mut parser = adapter.stdout_parser(ParseContext::new("/work/repo".into()));
            let mut events = Vec::new();
            for line in fs::read(&path)
                .expect("a readable fixture")
                .split(|&b| b == b'\n')
            {
                parser.line(line, &mut events);
            }
            let ending = Ending::of_agent(parser.end(&mut events), ExitInfo::default());
            events.extend([
                ending.turn_event(),
                ending.run_event(Duration::from_secs(1)),
            ]);
            run.push(events);
            lines.extend(run.log.unwrap_or_default());
        }
    }
    Vocabulary::of_lines(lines)
});
static RECEIPT: LazyLock<Value> = LazyLock::new(|| {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/receipt.json");
    serde_json::from_slice(&fs::read(path).expect("the receipt fixture")).expect("valid JSON")
});

/// Any JSON value, its keys and strings mostly from `vocab`.
fn json(vocab: &'static Vocabulary) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        select(vocab.strings.clone()).prop_map(Value::String),
        select(vocab.types.clone()).prop_map(Value::String),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 40, 6, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::vec((select(vocab.keys.clone()), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A line object with a known `type` and fields from `vocab`.
fn json_line(vocab: &'static Vocabulary) -> impl Strategy<Value = String> {
    (
        select(vocab.types.clone()),
        proptest::collection::vec((select(vocab.keys.clone()), json(vocab)), 0..6),
    )
        .prop_map(|(kind, fields)| {
            let mut map: Map<String, Value> = fields.into_iter().collect();
            map.insert("type".to_owned(), Value::String(kind));
            Value::Object(map).to_string()
        })
}

/// One edit of a byte string: insert, remove or replace at a position (taken modulo its length).
#[derive(Debug, Clone)]
enum Edit {
    Insert(usize, Vec<u8>),
    Remove(usize, usize),
    Replace(usize, u8),
}

fn edit() -> impl Strategy<Value = Edit> {
    const PIECES: &[&str] = &[
        "\"",
        "\\",
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "null",
        "true",
        "-1",
        "1e400",
        "-0.0",
        "18446744073709551616",
        "\\u0000",
        "\\ud800",
        "\n",
        "\r",
        "\t",
        "é",
        "\u{7f}",
    ];
    prop_oneof![
        (
            any::<usize>(),
            prop_oneof![
                select(PIECES).prop_map(|p| p.as_bytes().to_vec()),
                proptest::collection::vec(any::<u8>(), 1..4),
            ]
        )
            .prop_map(|(at, bytes)| Edit::Insert(at, bytes)),
        (any::<usize>(), 1..16usize).prop_map(|(at, len)| Edit::Remove(at, len)),
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Edit::Replace(at, b)),
    ]
}

fn apply(mut bytes: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let at = |i: usize, len: usize| if len == 0 { 0 } else { i % (len + 1) };
        match e {
            Edit::Insert(i, piece) => {
                let i = at(*i, bytes.len());
                bytes.splice(i..i, piece.iter().copied());
            }
            Edit::Remove(i, n) => {
                let i = at(*i, bytes.len());
                bytes.drain(i..(i + n).min(bytes.len()));
            }
            Edit::Replace(i, b) => {
                if !bytes.is_empty() {
                    let i = i % bytes.len();
                    bytes[i] = *b;
                }
            }
        }
    }
    bytes
}

/// A recorded line with a few random edits.
fn edited_line(vocab: &'static Vocabulary) -> impl Strategy<Value = Vec<u8>> {
    (
        select(vocab.lines.clone()),
        proptest::collection::vec(edit(), 0..6),
    )
        .prop_map(|(line, edits)| apply(line.into_bytes(), &edits))
}

/// Several lines, each made up, recorded and edited, or shaped from the vocabulary.
fn stream(vocab: &'static Vocabulary) -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        json_line(vocab).prop_map(String::into_bytes),
        edited_line(vocab),
        select(vocab.lines.clone()).prop_map(String::into_bytes),
    ];
    proptest::collection::vec(line, 1..10).prop_map(|lines| lines.join(&b'\n'))
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..MAX_BYTES)
}

/// The fixture receipt with some of its values replaced by any JSON, or its fields dropped.
fn receipt_json() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec((any::<usize>(), proptest::option::of(json(&EVENTS))), 0..4).prop_map(
        |changes| {
            let mut receipt = RECEIPT.clone();
            for (at, value) in changes {
                replace_nth(&mut receipt, at, value);
            }
            receipt.to_string().into_bytes()
        },
    )
}

/// Replaces (or, with `None`, removes from its object) the value at position `at` (modulo the
/// count, in depth-first order, the root excluded).
fn replace_nth(root: &mut Value, at: usize, with: Option<Value>) {
    fn count(v: &Value) -> usize {
        match v {
            Value::Array(a) => a.iter().map(|v| 1 + count(v)).sum(),
            Value::Object(m) => m.values().map(|v| 1 + count(v)).sum(),
            _ => 0,
        }
    }
    fn walk(v: &mut Value, at: &mut usize, with: &mut Option<Option<Value>>) -> bool {
        match v {
            Value::Array(items) => {
                for child in items {
                    if *at == 0 {
                        *child = with.take().flatten().unwrap_or(Value::Null);
                        return true;
                    }
                    *at -= 1;
                    if walk(child, at, with) {
                        return true;
                    }
                }
            }
            Value::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                for key in keys {
                    if *at == 0 {
                        match with.take().flatten() {
                            Some(w) => map.insert(key, w),
                            None => map.remove(&key),
                        };
                        return true;
                    }
                    *at -= 1;
                    if walk(map.get_mut(&key).expect("a key just listed"), at, with) {
                        return true;
                    }
                }
            }
            _ => {}
        }
        false
    }
    let n = count(root);
    if n > 0 {
        walk(root, &mut (at % n), &mut Some(with));
    }
}

/// The `key = value` lines of the starter `runbook.toml` (all commented out there), by section.
static STARTER: LazyLock<Vec<(String, Vec<String>)>> = LazyLock::new(|| {
    let mut sections: Vec<(String, Vec<String>)> = vec![(String::new(), Vec::new())];
    for line in crate::config::starter().lines() {
        let Some(line) = line.strip_prefix('#') else {
            continue;
        };
        if line.starts_with('[') {
            sections.push((line.to_owned(), Vec::new()));
        } else if line.contains(" = ") && !line.starts_with(' ') {
            sections
                .last_mut()
                .expect("a section")
                .1
                .push(line.to_owned());
        }
    }
    sections
});

/// A configuration file: the starter's settings, some left out, some given wrong values, in
/// sections that exist or not, with `#RUNBOOK_…=` lines standing for variables; sometimes edited.
fn config_text() -> impl Strategy<Value = Vec<u8>> {
    const WRONG: &[&str] = &[
        "\"nope\"",
        "\"0s\"",
        "\"18446744073709551615s\"",
        "-1",
        "0",
        "1e400",
        "-0.0",
        "nan",
        "inf",
        "\"\"",
        "[1, 2]",
        "[]",
        "{}",
        "{ input = -1 }",
        "'''multi\nline'''",
        "1979-05-27T07:32:00Z",
        "\"${HOME}/y\"",
        "\"~/x\"",
        "true",
    ];
    const HEADERS: &[&str] = &[
        "[agents.opencode]",
        "[agents.claude]",
        "[agents.codex]",
        "[agents.nope]",
        "[env]",
        "[prices]",
        "[x]",
    ];
    const VARS: &[&str] = &[
        "#RUNBOOK_TIMEOUT=5m",
        "#RUNBOOK_TIMEOUT=x",
        "#RUNBOOK_MAX_COST=-3",
        "#RUNBOOK_AGENT=claude",
        "#RUNBOOK_COLOR=sometimes",
        "#RUNBOOK_OPENCODE_BIN=/bin/true",
        "#RUNBOOK_INACTIVITY_TIMEOUT=18446744073709551615s",
        "#RUNBOOK_PLAN=maybe",
    ];
    let setting = |line: String| {
        let key = line.split(" = ").next().unwrap_or_default().to_owned();
        // One wrong value spoils the whole file: rare enough that, with every key of the starter
        // file present, most files still parse.
        prop_oneof![
            12 => Just(line),
            1 => select(WRONG).prop_map(move |v| format!("{key} = {v}")),
        ]
    };
    let section = move |(header, lines): (String, Vec<String>)| {
        let n = lines.len();
        (
            prop_oneof![4 => Just(header), 1 => select(HEADERS).prop_map(str::to_owned)],
            proptest::sample::subsequence(lines, 0..=n)
                .prop_flat_map(move |lines| lines.into_iter().map(setting).collect::<Vec<_>>()),
            proptest::option::of(select(VARS)),
        )
            .prop_map(|(header, lines, var)| {
                let mut text = header;
                for line in lines.into_iter().chain(var.map(str::to_owned)) {
                    text.push('\n');
                    text.push_str(&line);
                }
                text
            })
    };
    let sections: Vec<_> = STARTER.iter().cloned().map(section).collect();
    let n = sections.len();
    (
        sections,
        proptest::sample::subsequence((0..n).collect::<Vec<_>>(), 0..=n),
        prop_oneof![4 => Just(Vec::new()), 1 => proptest::collection::vec(edit(), 1..4)],
    )
        .prop_map(|(sections, keep, edits)| {
            let text: Vec<&str> = keep.iter().map(|&i| sections[i].as_str()).collect();
            apply(text.join("\n").into_bytes(), &edits)
        })
}

/// A `.env` file: assignments, quotes, escapes and references, some of them broken.
fn dotenv_text() -> impl Strategy<Value = Vec<u8>> {
    const GOOD: &[&str] = &[
        "A=1",
        "export B=two",
        "C='single ${X}'",
        "D=\"double\\n${HOME}\"",
        "E=\"multi\nline\"",
        "# comment",
        "F= spaced",
        "Q=é😀",
        "",
        "  ",
        "R=\"\\$\\\\\\\"\"",
        "S=${A}",
        "T=a\r",
    ];
    const BROKEN: &[&str] = &[
        "G=${",
        "I=\"unterminated",
        "J='open",
        "1K=x",
        "L",
        "=M",
        "N=\"a\" b",
        "O=\"\\",
        "P=${A",
        "export",
        "\t",
        "\\",
        "${}",
        "$",
        "\"",
        "'",
        "=",
        "U=${UNSET}",
        "V=\"${B\"",
    ];
    proptest::collection::vec(
        prop_oneof![
            12 => select(GOOD).prop_map(str::to_owned),
            1 => select(BROKEN).prop_map(str::to_owned),
            1 => any::<String>(),
        ],
        0..8,
    )
    .prop_map(|lines| lines.join("\n").into_bytes())
}

proptest! {
    #[test]
    fn prop_opencode_bytes(data in bytes()) { opencode(&data) }

    #[test]
    fn prop_opencode_lines(data in stream(&OPENCODE)) { opencode(&data) }

    #[test]
    fn prop_claude_bytes(data in bytes()) { claude(&data) }

    #[test]
    fn prop_claude_lines(data in stream(&CLAUDE)) { claude(&data) }

    #[test]
    fn prop_codex_bytes(data in bytes()) { codex(&data) }

    #[test]
    fn prop_codex_lines(data in stream(&CODEX)) { codex(&data) }

    #[test]
    fn prop_generic_bytes(data in bytes()) { generic(&data) }

    #[test]
    fn prop_generic_lines(data in stream(&EVENTS)) { generic(&data) }

    #[test]
    fn prop_event_log_bytes(data in bytes()) { event_log(&data) }

    #[test]
    fn prop_event_log_lines(data in stream(&EVENTS)) { event_log(&data) }

    #[test]
    fn prop_receipt_bytes(data in bytes()) { receipt(&data) }

    #[test]
    fn prop_receipt_json(data in receipt_json()) { receipt(&data) }

    #[test]
    fn prop_config_bytes(data in bytes()) { config(&data) }

    #[test]
    fn prop_config_toml(data in config_text()) { config(&data) }

    #[test]
    fn prop_dotenv_bytes(data in bytes()) { dotenv(&data) }

    #[test]
    fn prop_dotenv_text(data in dotenv_text()) { dotenv(&data) }
}

#[test]
fn prop_vocabularies_are_not_empty() {
    for vocab in [&*OPENCODE, &*CLAUDE, &*CODEX, &*EVENTS] {
        assert!(vocab.types.len() > 3 && vocab.keys.len() > 10 && vocab.lines.len() > 20);
    }
}

/// Share of generated inputs for which `reads` holds, out of 200.
fn share(strategy: impl Strategy<Value = Vec<u8>>, reads: impl Fn(&[u8]) -> bool) -> f64 {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let hits = (0..200)
        .filter(|_| {
            let input = strategy
                .new_tree(&mut runner)
                .expect("a generated input")
                .current();
            reads(&input)
        })
        .count();
    hits as f64 / 200.0
}

#[test]
fn prop_generated_input_mostly_reaches_past_the_first_check() {
    let lines_read = |adapter: &'static dyn Adapter| {
        move |data: &[u8]| {
            let mut parser = adapter.stdout_parser(ParseContext::new("/w".into()));
            let mut events = Vec::new();
            for line in data.split(|&b| b == b'\n') {
                parser.line(line, &mut events);
            }
            events.iter().any(|e| !matches!(e, EventKind::Unparsed(_)))
        }
    };
    let events_read = |data: &[u8]| {
        data.split(|&b| b == b'\n')
            .any(|l| serde_json::from_slice::<Event>(l).is_ok())
    };
    let receipt_read = |data: &[u8]| serde_json::from_slice::<Receipt>(data).is_ok();
    let config_read = |data: &[u8]| {
        let text = String::from_utf8_lossy(data);
        crate::config::parse_file(Layer::Repo, Path::new("/r/runbook.toml"), &text)
            .is_ok_and(|f| !f.entries.is_empty())
    };
    let dotenv_read = |data: &[u8]| {
        crate::agent_env::parse_dotenv(&String::from_utf8_lossy(data), &|_| None)
            .is_ok_and(|a| !a.is_empty())
    };
    let shares = [
        ("opencode", share(stream(&OPENCODE), lines_read(&OpenCode))),
        ("claude", share(stream(&CLAUDE), lines_read(&Claude))),
        ("codex", share(stream(&CODEX), lines_read(&Codex))),
        ("generic", share(stream(&EVENTS), lines_read(&Generic))),
        ("event log", share(stream(&EVENTS), events_read)),
        ("receipt", share(receipt_json(), receipt_read)),
        ("config", share(config_text(), config_read)),
        ("dotenv", share(dotenv_text(), dotenv_read)),
    ];
    for (name, share) in shares {
        assert!(share >= 0.15, "{name}: only {share} of the inputs are read");
    }
}
