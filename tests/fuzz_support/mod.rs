//! The harness of the `fuzz_*` targets (stable Rust has no `cargo fuzz`): each target is a
//! proptest strategy and a check run by [`fuzz`]. The test command runs every target briefly
//! from a fixed seed; `scripts/fuzz.sh SECONDS` sets `NEARDUP_FUZZ_SECONDS`, and each target then
//! runs round after round (each from a seed of its own) until its time is up. Either way a target
//! prints its executions to stderr. A failing case is shrunk by proptest, and the test fails with
//! the minimal input: make it a named regression test beside the target.

#![allow(dead_code)]

use std::cell::Cell;
use std::fmt::Debug;
use std::time::Instant;

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

/// The seed of the test command's runs; a long run's round `r` uses `SEED + r`.
pub const SEED: u64 = 0x6e64_f022_2014_0003;

/// Cases of one round of a timed run.
const ROUND_CASES: u32 = 256;

/// The time budget of one target, from `NEARDUP_FUZZ_SECONDS` (absent: the fixed-seed run).
pub fn budget() -> Option<f64> {
    std::env::var("NEARDUP_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| *s > 0.0)
}

fn rng(seed: u64) -> TestRng {
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_exact_mut(8).enumerate() {
        let word = seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

/// Runs `check` on values of `strategy`: `cases` of them from [`SEED`], or, under
/// `NEARDUP_FUZZ_SECONDS`, as many as fit in that time. Panics (failing the test) with the
/// shrunk input when a check fails or panics.
pub fn fuzz<S>(
    name: &str,
    cases: u32,
    strategy: S,
    check: impl Fn(S::Value) -> Result<(), TestCaseError>,
) where
    S: Strategy,
    S::Value: Debug,
{
    let budget = budget();
    let start = Instant::now();
    let runs = Cell::new(0u64);
    let mut round = 0u64;
    loop {
        let config = Config {
            cases: if budget.is_some() { ROUND_CASES } else { cases },
            failure_persistence: None,
            max_shrink_iters: 20_000,
            ..Config::default()
        };
        let mut runner = TestRunner::new_with_rng(config, rng(SEED.wrapping_add(round)));
        let result = runner.run(&strategy, |v| {
            runs.set(runs.get() + 1);
            check(v)
        });
        if let Err(e) = result {
            panic!(
                "fuzz {name}: failure in round {round} (seed {:#x}) after {} executions: {e}",
                SEED.wrapping_add(round),
                runs.get()
            );
        }
        round += 1;
        match budget {
            Some(b) if start.elapsed().as_secs_f64() < b => {}
            _ => break,
        }
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "fuzz {name}: {} executions in {secs:.1} s ({:.0}/s), {round} round(s), 0 failures",
        runs.get(),
        runs.get() as f64 / secs.max(1e-9),
    );
}
