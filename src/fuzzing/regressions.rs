//! Every input a fuzz target once failed on (`fixtures/fuzz/<target>/`), read again through its
//! target: each stays fixed.

use std::path::Path;

use super::*;

/// The entry point of a fuzz target, by its name.
fn target(name: &str) -> fn(&[u8]) {
    match name {
        "opencode" => opencode,
        "claude" => claude,
        "codex" => codex,
        "generic" => generic,
        "event_log" => event_log,
        "receipt" => receipt,
        "config" => config,
        "dotenv" => dotenv,
        other => panic!("fixtures/fuzz/{other}: no fuzz target of that name"),
    }
}

#[test]
fn inputs_fuzzing_once_failed_on_are_read() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fuzz");
    let mut read = 0;
    for dir in fs::read_dir(root).expect("fixtures/fuzz") {
        let dir = dir.expect("a target directory").path();
        let run = target(&dir.file_name().expect("a name").to_string_lossy());
        for input in fs::read_dir(&dir).expect("a target directory") {
            let input = input.expect("an input").path();
            if input.extension().is_some_and(|e| e == "md") {
                continue;
            }
            run(&fs::read(&input).expect("a readable input"));
            read += 1;
        }
    }
    assert!(read > 0, "no inputs in fixtures/fuzz");
}
