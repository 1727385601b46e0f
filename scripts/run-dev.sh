#!/usr/bin/env bash
# The main job on the sample corpus: ingest the bench's dev corpus in corpus order (the default
# order) into a fresh index (progress bar on a terminal, summary at the end), export the cluster
# assignments, and score them with the bench's score.py.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BENCH="${BENCH:-../shared/bench}"
OUT="${OUT:-target/dev-run}"
rm -rf "$OUT"
mkdir -p "$OUT"
cargo build --release -p neardup-tools
./target/release/neardup ingest --index "$OUT/index" "$BENCH/dev/docs.jsonl.gz"
./target/release/neardup export --index "$OUT/index" --out "$OUT/clusters.tsv"
python3 "$BENCH/score.py" "$BENCH/dev/truth.jsonl.gz" "$OUT/clusters.tsv"
