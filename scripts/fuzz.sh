#!/usr/bin/env bash
# Runs every fuzz target (tests/fuzz_*.rs, src/storage/fuzz.rs, crates/neardup-input/tests/fuzz_readers.rs) for SECONDS each (default
# 60), one at a time, and prints each target's executions. The test command runs the same
# targets briefly from a fixed seed. A failure prints the shrunk input: make it a named
# regression test beside its target.
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
export NEARDUP_FUZZ_SECONDS="${1:-60}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
for t in tests/fuzz_*.rs; do
    name="$(basename "$t" .rs)"
    cargo test --release --test "$name" -- --nocapture --test-threads=1 2>&1 | tee -a "$log" || status=1
done
# The storage codecs and merge operator: a unit test of the library (they are not public).
cargo test --release --lib storage::fuzz -- --nocapture --test-threads=1 2>&1 | tee -a "$log" || status=1
cargo test --release -p neardup-input --test fuzz_readers -- --nocapture --test-threads=1 2>&1 \
    | tee -a "$log" || status=1
echo
echo "== fuzz summary (${NEARDUP_FUZZ_SECONDS} s per target) =="
grep -o 'fuzz [a-z_]*: .*' "$log" || true
grep -E '^fuzz .*failure in round|panicked' "$log" || true
exit "$status"
