//! Maintenance calls on an index: checkpoints, compaction, statistics and the invariant check.

use std::ffi::c_char;

use super::index::{nd_index, with_index};
use super::nd_status;
use super::types::{nd_stats, nd_str};
use super::{guard, out_arg, str_arg};
use crate::Index;

/// Writes a consistent snapshot of the index (a RocksDB checkpoint, hard links where possible)
/// to the directory `dir`, which must not exist. The index stays in use meanwhile.
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_UTF8`, `ND_IO` or `ND_STORAGE` (the directory exists…),
/// `ND_CLOSED`.
///
/// # Safety
/// `h` is NULL or live; `dir` points at `dir_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn nd_index_checkpoint(
    h: *mut nd_index,
    dir: *const c_char,
    dir_len: usize,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let dir = str_arg(dir, dir_len, "dir")?;
            ix.checkpoint(dir)?;
            Ok(())
        })
    }
}

/// Compacts the open index in place (all levels; deleted entries are dropped).
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_STORAGE`, `ND_CLOSED`.
///
/// # Safety
/// `h` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn nd_index_compact(h: *mut nd_index) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            ix.compact()?;
            Ok(())
        })
    }
}

/// Offline compaction of a snapshot: writes a new index at `to` (which must not exist) from the
/// closed index or checkpoint at `from`, with postings rewritten without deleted ids and
/// over-frequent fingerprints and every checksum re-checked, each column family written straight
/// into the last level; 1,000 random pages of the new index must pass their check (else it is
/// removed and `ND_CHECK_FAILED` returned; `nd_compact_snapshot_checked` checks it whole).
/// `from` is not modified.
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_UTF8`, `ND_INVALID_ARGUMENT` (`to` exists, or no index at
/// `from`), `ND_IO`, `ND_STORAGE`, `ND_CORRUPTION`, `ND_INCOMPATIBLE_FORMAT`, `ND_CHECK_FAILED`.
///
/// # Safety
/// `from` and `to` point at as many readable bytes as their lengths.
#[no_mangle]
pub unsafe extern "C" fn nd_compact_snapshot(
    from: *const c_char,
    from_len: usize,
    to: *const c_char,
    to_len: usize,
) -> nd_status {
    // SAFETY: per the contract.
    unsafe {
        compact_with(from, from_len, to, to_len, |f, t| {
            Index::compact_snapshot(f, t)
        })
    }
}

/// `nd_compact_snapshot`, then the whole new index checked rather than a sample of it.
///
/// # Errors
/// As `nd_compact_snapshot`.
///
/// # Safety
/// `from` and `to` point at as many readable bytes as their lengths.
#[no_mangle]
pub unsafe extern "C" fn nd_compact_snapshot_checked(
    from: *const c_char,
    from_len: usize,
    to: *const c_char,
    to_len: usize,
) -> nd_status {
    // SAFETY: per the contract.
    unsafe {
        compact_with(from, from_len, to, to_len, |f, t| {
            Index::compact_snapshot_checked(f, t)
        })
    }
}

/// The two paths of a compaction read, then `compact` called on them.
///
/// # Safety
/// `from` and `to` point at as many readable bytes as their lengths.
unsafe fn compact_with<R>(
    from: *const c_char,
    from_len: usize,
    to: *const c_char,
    to_len: usize,
    compact: impl FnOnce(&str, &str) -> crate::Result<R>,
) -> nd_status {
    guard(|| {
        // SAFETY: per the contract.
        let from = unsafe { str_arg(from, from_len, "from")? };
        // SAFETY: per the contract.
        let to = unsafe { str_arg(to, to_len, "to")? };
        compact(from, to)?;
        Ok(())
    })
}

/// Figures about the index. On `ND_OK`, `*out` is filled.
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_STORAGE`, `ND_CORRUPTION`, `ND_CLOSED`.
///
/// # Safety
/// `h` is NULL or live; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_stats(h: *const nd_index, out: *mut nd_stats) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let out = out_arg(out, "out")?;
            let s = ix.stats()?;
            *out = nd_stats {
                pages: s.pages,
                clusters: s.clusters,
                frequent_fingerprints: s.frequent.len() as u64,
                bytes: s.bytes.iter().map(|(_, b)| b).sum(),
                page_ids: s.page_ids,
                cluster_ids: s.cluster_ids,
            };
            Ok(())
        })
    }
}

/// Metrics since the index was opened, as one JSON object: per operation (`insert`, `batch`,
/// `query`, `near`, `delete`) the calls that succeeded (`count`), those that failed (`errors`)
/// and their latencies in microseconds (`latency`: `count`, `mean_us`, `p50_us`, `p90_us`,
/// `p99_us`, `max_us`); for inserts and batches what the pages turned out to be (`unchanged`,
/// `replaced`, `duplicates`; a batch's `pages` and `page_errors`); `rocksdb` (write stalls,
/// compaction debt) and `memory` by part, as `[name, value]` pairs; `uptime_secs`. Recording
/// costs the operations a few atomic adds. On `ND_OK`, `*out` holds the JSON (free it with
/// `nd_str_free`).
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_STORAGE`, `ND_CLOSED`.
///
/// # Safety
/// `h` is NULL or live; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_metrics_json(h: *const nd_index, out: *mut nd_str) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let out = out_arg(out, "out")?;
            *out = nd_str::from_str(&ix.metrics()?.to_json());
            Ok(())
        })
    }
}

/// Checks every invariant of the index (SPEC §3: postings, clusters, representatives, counters,
/// checksums). On `ND_OK`, `*problems` is the number of problems found (0: clean) and, when
/// `report` is not NULL, `*report` lists them one per line (free it with `nd_str_free`).
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_STORAGE`, `ND_CLOSED` — a check that ran and found problems is
/// `ND_OK`.
///
/// # Safety
/// `h` is NULL or live; the outs are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_check(
    h: *const nd_index,
    problems: *mut u64,
    report: *mut nd_str,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe { check_with(h, problems, report, |ix| ix.check()) }
}

/// Checks `pages` random pages of the index one by one (point reads): a quick look at an index
/// too large to check whole (see `nd_index_check`). The outs as for `nd_index_check`.
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_STORAGE`, `ND_CLOSED` — a check that ran and found problems is
/// `ND_OK`.
///
/// # Safety
/// `h` is NULL or live; the outs are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_check_sample(
    h: *const nd_index,
    pages: u64,
    problems: *mut u64,
    report: *mut nd_str,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe { check_with(h, problems, report, |ix| ix.check_sample(pages)) }
}

/// Runs `check` on the index and writes its outs (see `nd_index_check`).
///
/// # Safety
/// `h` is NULL or live; the outs are NULL or writable.
unsafe fn check_with(
    h: *const nd_index,
    problems: *mut u64,
    report: *mut nd_str,
    check: impl FnOnce(&Index) -> crate::Result<crate::CheckReport>,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let problems = out_arg(problems, "problems")?;
            let r = check(ix)?;
            *problems = r.problem_count;
            if !report.is_null() {
                *report = nd_str::from_str(&r.problems.join("\n"));
            }
            Ok(())
        })
    }
}

/// RocksDB's own statistics (compactions, levels, write stalls, block cache), column family by
/// column family, as text. On `ND_OK`, `*out` holds them (free it with `nd_str_free`).
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_STORAGE`, `ND_CLOSED`.
///
/// # Safety
/// `h` is NULL or live; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn nd_index_rocksdb_stats(h: *const nd_index, out: *mut nd_str) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        with_index(h, |ix| {
            let out = out_arg(out, "out")?;
            *out = nd_str::from_str(&ix.rocksdb_stats()?);
            Ok(())
        })
    }
}
