#!/usr/bin/env bash
# The crash soak: ROUNDS rounds (default 100) with `sync_writes` on, then as many with it off, of
# a writer killed with SIGKILL at a random moment and the index checked after each kill (see
# tests/index_crash.rs). Prints the figures of both modes; exits non-zero when anything
# acknowledged was lost or an invariant broke. NEARDUP_CRASH_KEEP=1 keeps the index and the side
# logs (the path is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-100}"
case "$rounds" in
  ''|*[!0-9]*) echo "usage: $0 [ROUNDS]" >&2; exit 2 ;;
esac
NEARDUP_CRASH_ROUNDS="$rounds" cargo test --release --test index_crash -- \
  --exact crash_soak --nocapture --test-threads=1
