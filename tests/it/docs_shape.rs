//! The docs read as they were written, whatever a merge spliced: no table row stranded outside
//! its table, no line of a command's output outside a code block, no section twice. (The
//! reference tables themselves are made from the code: `generated_regions_of_the_docs_are_current`.)

use std::path::{Path, PathBuf};

/// Every Markdown file of the project's docs, and the README.
fn docs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.push(root.join("README.md"));
    files.sort();
    files
}

/// How a line of a command's output starts (runbook's marks), never prose.
const OUTPUT_MARKS: [&str; 6] = ["✓ ", "✗ ", "! ", "⚠ ", "⛔ ", "    → "];

/// What is wrong with `text`'s shape: each problem with its line number.
fn misshapen(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut problems = Vec::new();
    let mut fenced = false;
    // A heading is known by the section above it: two `### The terminal` under two `##` may be.
    let mut headings = std::collections::HashSet::new();
    let mut section = "";
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let n = i + 1;
        if line.starts_with("## ") {
            section = line;
        }
        let within = if line.starts_with("### ") {
            section
        } else {
            ""
        };
        if line.starts_with('#') && !headings.insert((within, *line)) {
            problems.push(format!("{n}: a heading twice: {line}"));
        }
        if OUTPUT_MARKS.iter().any(|m| line.starts_with(m)) {
            problems.push(format!(
                "{n}: a command's output outside a code block: {line}"
            ));
        }
        if line.starts_with('|') && !in_table(&lines, i) {
            problems.push(format!("{n}: a table row outside a table: {line}"));
        }
    }
    problems
}

/// Whether the row at `i` is under a table's header: the rows above it, without a break, reach
/// a separator row (`| --- |`).
fn in_table(lines: &[&str], i: usize) -> bool {
    let is_separator =
        |l: &str| l.starts_with('|') && l.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '));
    lines[..=i]
        .iter()
        .rev()
        .take_while(|l| l.starts_with('|'))
        .any(|l| is_separator(l))
        || lines.get(i + 1).is_some_and(|l| is_separator(l))
}

#[test]
fn no_doc_has_a_stranded_row_output_outside_a_block_or_a_section_twice() {
    let mut problems = Vec::new();
    for file in docs() {
        let text = std::fs::read_to_string(&file).expect("a doc");
        for p in misshapen(&text) {
            problems.push(format!("{}:{p}", file.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_spliced_doc_is_told() {
    let spliced =
        "## Events\n\nProse.\n✓ opencode over ACP: protocol 1\n\n| `--stuck` | `stop` | … |\n";
    assert_eq!(misshapen(spliced).len(), 2, "{:?}", misshapen(spliced));
    let whole = "| a | b |\n| --- | --- |\n| 1 | 2 |\n\n```text\n✓ done\n```\n";
    assert!(misshapen(whole).is_empty(), "{:?}", misshapen(whole));
    assert_eq!(misshapen("# A\n\n# A\n").len(), 1);
    assert!(misshapen("## A\n### T\n## B\n### T\n").is_empty());
}
