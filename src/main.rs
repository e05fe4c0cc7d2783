//! The `runbook` binary: everything lives in the library; this only hands over to it.

fn main() -> std::process::ExitCode {
    runbook::main()
}
