#!/usr/bin/env bash
# Runs every test of neardup (library, tools, integration, doc tests) in the release profile, the
# one profile the project builds in, after installing what a fresh machine lacks.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The shared library first: tests/ffi_cpp.rs links the C++ test program against it.
cargo build --release --workspace
cargo test --release --workspace --all-targets
cargo test --release --workspace --doc
