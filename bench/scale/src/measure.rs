//! Process figures: CPU time, resident memory, directory sizes, percentiles.

use std::time::Duration;

/// CPU time (user + system) of this process so far: every thread, RocksDB's background
/// flushes and compactions included.
#[allow(unsafe_code)]
pub fn cpu_time() -> Duration {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a `rusage` into the pointer it is given, which points to one.
    let r = unsafe { libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr()) };
    if r != 0 {
        return Duration::ZERO;
    }
    // SAFETY: getrusage returned 0, so it filled the struct.
    let u = unsafe { u.assume_init() };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// CPU time of the calling thread so far.
#[allow(unsafe_code)]
pub fn thread_cpu_time() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one `timespec` into the pointer it is given.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    if r != 0 {
        return Duration::ZERO;
    }
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

fn status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Resident memory now, MB (`VmRSS`).
pub fn rss_mb() -> f64 {
    status_kb("VmRSS:") as f64 / 1024.0
}

/// Peak resident memory, MB (`VmHWM`: since the process started, or since the last
/// [`reset_peak`]).
pub fn peak_mb() -> f64 {
    status_kb("VmHWM:") as f64 / 1024.0
}

/// Resets the peak (`VmHWM`) to the current RSS (Linux ≥ 4.0: `5` to `clear_refs`). Returns
/// false when the kernel refused.
pub fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Latency figures of a set of calls, in microseconds.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Latency {
    /// Calls.
    pub n: usize,
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Mean.
    pub mean_us: f64,
    /// Slowest.
    pub max_us: f64,
    /// Where a call's time went on average, when the calls say (queries): main text and
    /// signatures, candidate search, verification, microseconds.
    #[serde(default)]
    pub parts_us: [f64; 3],
    /// Candidate pages a call found, on average.
    #[serde(default)]
    pub candidates: f64,
    /// Pairs a call verified, on average.
    #[serde(default)]
    pub verified: f64,
}

impl Latency {
    /// Figures of the given durations (nearest-rank percentiles).
    pub fn of(mut d: Vec<Duration>) -> Latency {
        if d.is_empty() {
            return Latency::default();
        }
        d.sort();
        let us = |x: Duration| x.as_secs_f64() * 1e6;
        let rank = |p: f64| {
            let i = ((p * d.len() as f64).ceil() as usize).clamp(1, d.len()) - 1;
            us(d[i])
        };
        Latency {
            n: d.len(),
            p50_us: rank(0.50),
            p90_us: rank(0.90),
            p99_us: rank(0.99),
            mean_us: d.iter().map(|x| us(*x)).sum::<f64>() / d.len() as f64,
            max_us: us(d[d.len() - 1]),
            ..Latency::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let d: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
        let l = Latency::of(d);
        assert_eq!(l.p50_us.round(), 50.0);
        assert_eq!(l.p99_us.round(), 99.0);
        assert_eq!(l.max_us.round(), 100.0);
        assert!(cpu_time() > Duration::ZERO);
        assert!(rss_mb() > 0.0);
    }
}
