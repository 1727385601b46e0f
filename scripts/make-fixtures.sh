#!/usr/bin/env bash
# Regenerates the on-disk format fixtures under tests/fixtures/ (opened by
# tests/format_fixtures.rs), each written by the build that wrote that format, pinned by commit.
# tests/fixtures/README.md says what each fixture is for and how it was made; this script is the
# exact recipe.
#
#   scripts/make-fixtures.sh [NAME...]        (default: every fixture below)
#
# Environment:
#   BENCH       the bench directory holding dev/docs.jsonl.gz (default ../shared/bench)
#   OLD_TARGET  the cargo target directory the pinned builds are compiled in (default
#               target/fixture-builds: the old lock files pin zstd-sys 2.1.2, so RocksDB's C++
#               compiles once there, about 15 minutes on 2 cores, and once more for the current
#               lock)
#   BINS        a directory of already built CLIs named `neardup-<commit12>`: a CLI found there
#               is used instead of building it
#   WORK        scratch directory (default: a new temporary directory, removed at the end)
#
# The pages are lines of the bench's dev corpus: part A (lines 1-160) is ingested, a checkpoint
# flushes it into SST files, four pages are deleted (among them the representatives of two
# clusters), part B (lines 161-240) is ingested, two more pages are deleted (a representative and
# a member), and a checkpoint of the index is the fixture. Both ingests keep corpus order
# (`--order input`), so the first page of a family is its representative, and commit every 40
# pages (`--batch 40`), so a posting gets several add operands in one memtable. The checkpoint is not
# compacted: its SST files keep the merge operands the build wrote (flushed postings are the
# partial merges of that build: `D` deltas before 2f32e05, `+` adds after), which a compaction
# would fold away. The expected answers are captured with the same build from a copy of the
# fixture (the old command lines open an index for writing).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BENCH="${BENCH:-$REPO/../shared/bench}"
DOCS="$BENCH/dev/docs.jsonl.gz"
OLD_TARGET="${OLD_TARGET:-$REPO/target/fixture-builds}"
FIX="$REPO/tests/fixtures"

# name, the commit that writes it, extra arguments for the ingest that creates the index.
FIXTURES=(
  "v1-3dd01c6|3dd01c676442c444c3bca7d951a0cede658bd2f6|"
  "v2-1c79d9d|1c79d9d6cb51c9c13a275e07aa1304c05988f691|"
  "v2-33b354b|33b354bb83e3b16865235fe4fb51ab3bdfc55c62|"
  "v3-cba90ae|cba90aed29f08ac6837043d9b8a94e75779f5591|"
  "v3-a5fff82|a5fff826953d9e9f0c11c2d75216907f3526808f|"
  "v3-a5fff82-shingle|a5fff826953d9e9f0c11c2d75216907f3526808f|--method shingle"
  "v3-c57f5fd|c57f5fd71ce255f22d5e17043923169d30b69b89|"
  "v4-88ead35|88ead353ddb10f1bb1335ab22eef4b91888164f0|"
)
# Lines of dev/docs.jsonl.gz (1-based).
PART_A="1,160"
PART_B="161,240"
DELETE_AFTER_A="1 12 14 11"  # f000845's first page, f000083's first page and a member, a single page
DELETE_AFTER_B="148 101"      # f000163's first page, a member of f001502
# The query pages (tests/fixtures/queries.jsonl.gz): a stored page (13), variants and copies of
# stored families (248 250 259 272 297 316), the first page of a family the index does not hold
# (247).
QUERY_LINES="13 247 248 250 259 272 297 316"

if [[ ! -f "$DOCS" ]]; then
  echo "no dev corpus at $DOCS (set BENCH)" >&2
  exit 1
fi
own_work=0
if [[ -z "${WORK:-}" ]]; then
  WORK="$(mktemp -d)"
  own_work=1
fi
mkdir -p "$WORK/in" "$WORK/bin" "$FIX"
cleanup() {
  for wt in "$WORK"/src-*; do
    [[ -d "$wt" ]] && git -C "$REPO" worktree remove --force "$wt"
  done
  [[ $own_work == 1 ]] && rm -rf "$WORK"
  return 0
}
trap cleanup EXIT

# The inputs, cut from the corpus.
zcat "$DOCS" | sed -n "${PART_A}p" > "$WORK/in/a.jsonl"
zcat "$DOCS" | sed -n "${PART_B}p" > "$WORK/in/b.jsonl"
awk_lines() { local cond="" n; for n in "$@"; do cond+="${cond:+||}NR==$n"; done; echo "$cond"; }
zcat "$DOCS" | awk "$(awk_lines $QUERY_LINES)" | gzip -n -9 > "$FIX/queries.jsonl.gz"
# The keys (`id`) of lines of the corpus, in the order given.
keys_of_lines() {
  zcat "$DOCS" | python3 -c '
import json, sys
want = [int(n) for n in sys.argv[1:]]
keys = {i: json.loads(line)["id"] for i, line in enumerate(sys.stdin, 1) if i in want}
print("\n".join(keys[n] for n in want))' "$@"
}
mapfile -t del_a < <(keys_of_lines $DELETE_AFTER_A)
mapfile -t del_b < <(keys_of_lines $DELETE_AFTER_B)

# The CLI of a commit: from $BINS, or built in a detached worktree of that commit.
cli_of() {
  local commit=$1 short=${1:0:12}
  local bin="$WORK/bin/neardup-$short"
  if [[ ! -x "$bin" ]]; then
    if [[ -n "${BINS:-}" && -x "$BINS/neardup-$short" ]]; then
      cp "$BINS/neardup-$short" "$bin"
    else
      local src="$WORK/src-$short"
      git -C "$REPO" worktree add --detach "$src" "$commit" >&2
      (cd "$src" && CARGO_TARGET_DIR="$OLD_TARGET" cargo build --release --locked -p neardup-tools >&2)
      cp "$OLD_TARGET/release/neardup" "$bin"
      git -C "$REPO" worktree remove --force "$src"
    fi
  fi
  echo "$bin"
}

make_fixture() {
  local name=$1 commit=$2 extra=$3
  local bin
  bin="$(cli_of "$commit")"
  local w="$WORK/$name"
  rm -rf "$w"
  mkdir -p "$w"
  echo "== $name: $commit ${extra}" >&2
  # shellcheck disable=SC2086 # $extra is a list of arguments
  "$bin" ingest --index "$w/ix" --order input --batch 40 $extra "$WORK/in/a.jsonl" >&2
  "$bin" checkpoint --index "$w/ix" --out "$w/flush" >&2 # flushes part A into SST files
  rm -rf "$w/flush"
  "$bin" delete --index "$w/ix" "${del_a[@]}" >&2
  "$bin" ingest --index "$w/ix" --order input --batch 40 "$WORK/in/b.jsonl" >&2
  "$bin" delete --index "$w/ix" "${del_b[@]}" >&2
  "$bin" checkpoint --index "$w/ix" --out "$w/db" >&2
  # The answers of the writing build, from a copy (its commands open the index for writing).
  cp -r "$w/db" "$w/probe"
  local out="$w/expected"
  mkdir -p "$out"
  "$bin" check --index "$w/probe" > "$out/check.txt"
  "$bin" stats --index "$w/probe" > "$out/stats.json"
  "$bin" export --index "$w/probe" | LC_ALL=C sort > "$out/export.tsv"
  "$bin" export --index "$w/probe" --clusters > "$out/clusters.jsonl"
  "$bin" query --index "$w/probe" "$FIX/queries.jsonl.gz" > "$out/query.jsonl"
  {
    echo "commit $commit"
    echo "built $("$bin" --version)"
    echo "ingest arguments: --order input --batch 40 ${extra}"
    echo "deleted after part A: ${del_a[*]}"
    echo "deleted after part B: ${del_b[*]}"
  } > "$out/made.txt"
  rm -rf "${FIX:?}/$name"
  mkdir -p "$FIX/$name"
  cp -r "$w/db" "$FIX/$name/db"
  cp -r "$out" "$FIX/$name/expected"
  echo "   $(du -sk "$FIX/$name/db" | cut -f1) KiB, $(grep -c . "$out/export.tsv") pages" >&2
}

wanted=("$@")
for f in "${FIXTURES[@]}"; do
  IFS='|' read -r name commit extra <<< "$f"
  if [[ ${#wanted[@]} -gt 0 && ! " ${wanted[*]} " == *" $name "* ]]; then
    continue
  fi
  make_fixture "$name" "$commit" "$extra"
done
