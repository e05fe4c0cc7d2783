//! Whether a tool's error or the agent's stderr tells of an operation the sandbox refused:
//! `EACCES` and `EPERM` as programs print them, and `EROFS`, which a write outside bubblewrap's
//! writable paths gets. A refusal runbook cannot see (a program that
//! swallows its error) is not counted.

/// How programs print a refused operation: C's `strerror`, Rust's, Node's and Bun's (OpenCode's
/// tools: `PermissionDenied: FileSystem.open (…)`) error names.
const WORDS: [&str; 8] = [
    "permission denied",
    "permissiondenied",
    "operation not permitted",
    "eacces",
    "eperm",
    "os error 13",
    "read-only file system",
    "erofs",
];

/// Whether `text` tells of a refused operation.
pub(crate) fn is_denial(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    WORDS.iter().any(|w| lower.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_told_as_programs_print_them_and_other_errors_are_not() {
        assert!(is_denial("sh: 1: cannot create /etc/x: Permission denied"));
        assert!(is_denial(
            "write /root/.ssh/x: Permission denied (os error 13)"
        ));
        assert!(is_denial("Error: EACCES: permission denied, open '/etc/x'"));
        assert!(is_denial("kill: (1) - Operation not permitted"));
        assert!(is_denial(
            "PermissionDenied: FileSystem.open (/home/me/.ssh/id_ed25519)"
        ));
        assert!(is_denial(
            "sh: 1: cannot create /etc/x: Read-only file system"
        ));
        assert!(!is_denial("File not found: /work/missing.txt"));
        assert!(!is_denial("The user rejected permission to use this tool"));
    }
}
