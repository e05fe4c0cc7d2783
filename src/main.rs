//! The `runbook` binary: everything lives in the library; this only hands over to it.

/// mimalloc frees a batch of events in a few instructions each, where glibc's allocator takes a
/// slower path once its small per-thread cache is full (docs/benchmarks-history.md, "Seventh pass"). Built
/// without transparent huge pages, so that runbook's resident memory stays small.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    runbook::main()
}
