//! CPU time of the calling thread, for reports that time work on a loaded machine (wall time
//! there includes waiting for a core).

/// Nanoseconds the calling thread has run on a CPU, from Linux's `/proc/thread-self/schedstat`
/// (its first field); `None` where that file is missing.
pub fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
