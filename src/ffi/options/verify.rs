//! The verification settings (seed 000 §3.2 and §5's rates and thresholds, and the rules issue
//! #35 added for pages revised all through or contained in longer ones). None is stored: each
//! may change from one opening to the next.

use super::{nd_options, set, unit};
use crate::ffi::nd_status;

/// Verification thresholds: a pair is similar when resemble ≥ `resemble` or contain ≥
/// `contain` (both inclusive; defaults 0.28 and 0.70, seed 000 §5).
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_ARGUMENT` for a value outside 0..1 (nothing is changed).
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_thresholds(
    opts: *mut nd_options,
    resemble: f64,
    contain: f64,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(opts, |o| {
            let resemble = unit("resemble", resemble)?;
            let contain = unit("contain", contain)?;
            o.opts.verify.resemble_threshold = resemble;
            o.opts.verify.contain_threshold = contain;
            Ok(())
        })
    }
}

/// Whole-LCS rule (a documented deviation from seed 000 §4.4, for pages revised all through):
/// a pair is also similar when the whole LCS of its filter skeletons gives a resemble rate ≥
/// `threshold`, never below the resemble threshold (default 0.44; 1 turns the rule off).
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_ARGUMENT` for a value outside 0..1.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_lcs_resemble_threshold(
    opts: *mut nd_options,
    threshold: f64,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(opts, |o| {
            o.opts.verify.lcs_resemble_threshold = unit("lcs resemble", threshold)?;
            Ok(())
        })
    }
}

/// Weighted whole-LCS rule (issue #35; seed 000 §4.4 counts GBK bytes): a pair is also
/// similar when the whole LCS of its filter skeletons, each unit weighted by its length in
/// characters (a word 6, a CJK character or punctuation mark 1), gives a resemble rate ≥
/// `threshold` (default 0.48; 1 turns the rule off): a help page and its partial translation.
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_ARGUMENT` for a value outside 0..1.
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_weighted_lcs_resemble_threshold(
    opts: *mut nd_options,
    threshold: f64,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(opts, |o| {
            o.opts.verify.weighted_lcs_resemble_threshold =
                unit("weighted lcs resemble", threshold)?;
            Ok(())
        })
    }
}

/// Located containment (seed 000 §3.2, `c = |LCS| / |B|` over characters; issue #35): a pair
/// the other rules keep apart is also similar when the word-level alignment covers at least
/// `min_lcs` of the shorter text (default 0.50; 1 turns the rule off) and, counted in
/// characters, at least `threshold` of the shorter text is found in order in the window of the
/// longer one where the alignment placed it (default 0.80).
///
/// # Errors
/// `ND_NULL_POINTER`, `ND_INVALID_ARGUMENT` for a value outside 0..1 (nothing is changed).
///
/// # Safety
/// `opts` is NULL or a live `nd_options`.
#[no_mangle]
pub unsafe extern "C" fn nd_options_set_located_containment(
    opts: *mut nd_options,
    threshold: f64,
    min_lcs: f64,
) -> nd_status {
    // SAFETY: forwarded contract.
    unsafe {
        set(opts, |o| {
            let threshold = unit("located contain", threshold)?;
            let min_lcs = unit("located contain min lcs", min_lcs)?;
            o.opts.verify.located_contain_threshold = threshold;
            o.opts.verify.located_contain_min_lcs = min_lcs;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{nd_options_free, nd_options_new};
    use super::*;
    use crate::ffi::nd_status::*;

    fn with_options(f: impl FnOnce(*mut nd_options)) {
        let mut o = std::ptr::null_mut();
        // SAFETY: a valid out pointer; the options are freed once below.
        unsafe {
            assert_eq!(nd_options_new(&mut o), ND_OK);
            f(o);
            nd_options_free(o);
        }
    }

    fn verify(o: *mut nd_options) -> crate::verify::VerifyConfig {
        // SAFETY: live options made by `with_options`.
        unsafe { (*o).opts.verify.clone() }
    }

    #[test]
    fn located_containment_is_set_whole_or_not_at_all() {
        with_options(|o| {
            // SAFETY: live options.
            unsafe {
                assert_eq!(nd_options_set_located_containment(o, 0.9, 0.6), ND_OK);
                let v = verify(o);
                assert_eq!(
                    (v.located_contain_threshold, v.located_contain_min_lcs),
                    (0.9, 0.6)
                );
                assert_eq!(
                    nd_options_set_located_containment(o, 0.7, 1.5),
                    ND_INVALID_ARGUMENT
                );
                assert_eq!(
                    nd_options_set_located_containment(o, f64::NAN, 0.5),
                    ND_INVALID_ARGUMENT
                );
                let v = verify(o);
                assert_eq!(
                    (v.located_contain_threshold, v.located_contain_min_lcs),
                    (0.9, 0.6)
                );
                let null = std::ptr::null_mut();
                assert_eq!(
                    nd_options_set_located_containment(null, 0.8, 0.5),
                    ND_NULL_POINTER
                );
            }
        });
    }

    #[test]
    fn thresholds_are_set_whole_or_not_at_all() {
        with_options(|o| {
            // SAFETY: live options.
            unsafe {
                let before = verify(o);
                assert_eq!(nd_options_set_thresholds(o, 0.5, -0.1), ND_INVALID_ARGUMENT);
                let after = verify(o);
                assert_eq!(after.resemble_threshold, before.resemble_threshold);
                assert_eq!(nd_options_set_thresholds(o, 0.5, 0.6), ND_OK);
                let v = verify(o);
                assert_eq!((v.resemble_threshold, v.contain_threshold), (0.5, 0.6));
            }
        });
    }
}
