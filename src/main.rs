//! The `runbook` binary: everything lives in the library; this only sets up the allocator and
//! hands over to it.

use std::ffi::c_long;

/// mimalloc frees a batch of events in a few instructions each, where glibc's allocator takes a
/// slower path once its small per-thread cache is full (docs/benchmarks-history.md, "Seventh pass"). Built
/// without transparent huge pages, so that runbook's resident memory stays small.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc.h's `mi_option_t`: how long freed memory stays committed
/// before it is given back. libmimalloc-sys names no constant for it.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// The delay runbook asks for, in milliseconds. mimalloc 3 keeps freed pages for a second (its
/// version 2 kept them 10 ms), longer than a fast agent's whole stream: a run's heap then grows
/// with every batch it has freed, not with what it holds. With 100 ms the median peak on 5,000,000
/// tiny lines was 18.0 MiB against 23.3; 10 ms kept no less, and cost 6% more time in faulting
/// the given-back pages in again (BENCHMARKS.md, "Peak memory, and the release build").
const PURGE_DELAY_MS: c_long = 100;

fn main() -> std::process::ExitCode {
    // mimalloc read its options from the environment before `main`; one set there stays.
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one of mimalloc's options, an atomic store with no other effect.
        unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, PURGE_DELAY_MS) };
    }
    runbook::main()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option's index is the purge delay's: nothing else in mimalloc 3 defaults to 1000 ms,
    /// and setting it changes what mimalloc reports.
    #[test]
    fn the_purge_delay_is_the_option_set() {
        // SAFETY: reads and sets mimalloc's options; nothing else in this test process does.
        unsafe {
            if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
                assert_eq!(libmimalloc_sys::mi_option_get(PURGE_DELAY), 1000);
            }
            libmimalloc_sys::mi_option_set(PURGE_DELAY, PURGE_DELAY_MS);
            assert_eq!(libmimalloc_sys::mi_option_get(PURGE_DELAY), PURGE_DELAY_MS);
        }
    }
}
