#!/usr/bin/env bash
# The main job on the sample corpus: extract and fingerprint every page of the bench's dev corpus
# with a progress bar, then print a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BENCH="${BENCH:-../shared/bench/dev}"
cargo run --release -p neardup-tools -- signatures "$BENCH/docs.jsonl.gz"
