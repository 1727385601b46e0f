//! The options of the candidate keys a page gets: seed 000 §4.2's signature parameters, and
//! the containment keys (seed 000 §4.4, issue #35) that let an excerpt find the page it is part
//! of. All are stored in the index at creation.

use super::{nd_options, set};
use crate::ffi::nd_status;

/// The signature parameters (all stored in the index, must match when reopening; the defaults
/// are seed 000 §4.2's: 11, 7, 4, 101, 16, clauses on, sketch 8, CJK bigrams). Widths are in
/// GBK bytes as the paper counts them (a CJK character 2, other characters 1).
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_ARGUMENT` for values the pipeline cannot use (0 groups,
/// rotations outside 1..16…), naming the first one.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn nd_options_set_signature(
    opts: *mut nd_options,
    min_sentence_width: u32,
    groups: u32,
    sentences_per_fingerprint: u32,
    min_cover_width: u32,
    rotations: u32,
    clause_units: bool,
    sketch_size: u32,
    simhash_cjk_ngram: u32,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(opts, |o| {
            let sig = crate::SignatureConfig {
                min_sentence_width,
                groups,
                sentences_per_fingerprint,
                min_cover_width,
                rotations,
                clause_units,
                sketch_size,
                simhash_cjk_ngram,
                ..o.opts.signature.clone()
            };
            sig.validate()?;
            o.opts.signature = sig;
            Ok(())
        })
    }
}

/// The containment keys (seed 000 §4.4, the contain rate; issue #35), stored in the index when it
/// is made (an index made before an option existed keeps its pages' keys as they were):
/// - `local_window`, `local_keys`: each page keys the smallest unit digest of every window of at
///   least `local_window` consecutive units, about `local_keys` of them (default 32 and 256; 0
///   keys turns them off);
/// - `short_page_keys`: a page of at most `local_window` units keys every unit (default true);
/// - `sampled_keys`: every page also keys the units whose digest falls in a fixed
///   one-in-`sampled_keys` share of the digest space, at most 1,024 (default 16; 0 turns them
///   off).
///
/// # Errors
/// `ND_NULL_POINTER` when `opts` is NULL.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_containment_keys(
    opts: *mut nd_options,
    local_window: u32,
    local_keys: u32,
    short_page_keys: bool,
    sampled_keys: u32,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(opts, |o| {
            let sig = crate::SignatureConfig {
                local_window,
                local_keys,
                short_page_keys,
                sampled_keys,
                ..o.opts.signature.clone()
            };
            sig.validate()?;
            o.opts.signature = sig;
            Ok(())
        })
    }
}
