#!/usr/bin/env bash
# Long concurrency stress (issue "Reliability you can prove", point 5): 8 Rust threads of mixed
# operations on one index, then 8 C++ threads through the C ABI under ASan+UBSan, for SECONDS
# each (default 300); each ends with check() and every thread's keys verified.
#   scripts/stress.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
SECS="${1:-300}"
cargo build --release
NEARDUP_STRESS_SECONDS="$SECS" cargo test --release --test index_stress -- --nocapture
NEARDUP_STRESS_SECONDS="$SECS" cargo test --release --test ffi_cpp \
  eight_cpp_threads_under_asan_leave_a_consistent_index -- --nocapture
