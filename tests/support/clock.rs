//! Clock readings in nanoseconds, shared by the fake agent, which stamps each paced event with
//! the time of its write, and the benchmark, which compares those stamps with its own clock.

/// Nanoseconds on `clock` (`CLOCK_REALTIME`, `CLOCK_THREAD_CPUTIME_ID`, …).
pub fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Wall-clock time since the Unix epoch, in nanoseconds.
pub fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}
