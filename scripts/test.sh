#!/usr/bin/env bash
# Runs every test of neardup (library, tools, integration, doc tests) in the release profile, the
# one profile the project builds in, after installing what a fresh machine lacks.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --release --workspace --all-targets
cargo test --release --workspace --doc
