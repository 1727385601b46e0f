#!/usr/bin/env bash
# Runs every test of neardup (library, tools, integration, doc tests) in the release profile, the
# one profile the project builds in, after installing what a fresh machine lacks.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The libraries first: tests/ffi_cpp.rs links its C++ programs against libneardup.so, and
# tests/static_link.rs makes libneardup_embed.a from libneardup.a (scripts/static-lib.sh).
cargo build --release --workspace
cargo test --release --workspace --all-targets
cargo test --release --workspace --doc
