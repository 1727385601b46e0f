#!/usr/bin/env bash
# Makes the static library a program can embed next to its own RocksDB, zstd or lz4:
#
#   cargo build --release && scripts/static-lib.sh [IN [OUT]]
#
# IN defaults to target/release/libneardup.a, OUT to target/release/libneardup_embed.a (under
# CARGO_TARGET_DIR when set). Cargo's `libneardup.a` defines the bundled RocksDB, zstd, lz4 and
# Rust's std as global symbols: a program that also links another RocksDB binds some of its calls
# to ours, or ours to its, without a warning, and crashes. OUT holds one object, the partial link
# of what the C ABI needs, whose only global definitions are the `nd_*` functions:
#
# 1. `ld -r -u nd_…` pulls from IN the members the C ABI needs, as a final link would, resolves
#    every reference between them, and drops the sections the C ABI cannot reach (`--gc-sections`;
#    static constructors, `.init_array`, are kept). `--force-group-allocation` turns the COMDAT
#    groups (C++ inline functions, templates) into ordinary sections: a group left in the object
#    is deduplicated by name against the program's own copy (of another RocksDB's
#    `~BlockBasedTableOptions`, say) whatever the symbol's binding, and that link fails with
#    "defined in discarded section".
# 2. objcopy makes every other defined symbol local. It localizes global, weak and thread-local
#    symbols but not GNU unique ones (static locals of C++ inline functions, which the dynamic
#    linker merges across the process), so those are weakened first. Undefined references to the
#    bundled libraries' optional hooks (RocksDB's RocksDbThreadYieldAndCheckAbort and TEST_ hooks,
#    zstd's ZSTD_trace_*, the TLS init functions of RocksDB's thread_locals) are renamed with the
#    prefix `__neardup_unbound_`: under their own names a definition in the program or in another
#    RocksDB would be called by ours; renamed, nothing defines them and they stay null. The LLVM
#    bitcode Rust's std objects carry is dropped.
# 3. Checks that the object defines exactly the `nd_*` functions as globals, then writes OUT.
#
# What stays undefined comes from the C and C++ runtimes (libc, libm, libstdc++, libgcc_s): link
# OUT with `-lstdc++ -lpthread -ldl -lm` (g++ adds libstdc++ itself; since glibc 2.34 libpthread
# and libdl are part of libc). Tools: binutils' ld, objcopy, readelf and ar (LD, OBJCOPY, READELF
# and AR override them); readelf rather than nm, which hands objects carrying LLVM bitcode to an
# installed LLVM plugin that may abort on a newer LLVM's bitcode.
set -euo pipefail

release="${CARGO_TARGET_DIR:-$(cd "$(dirname "$0")/.." && pwd)/target}/release"
in="${1:-$release/libneardup.a}"
out="${2:-$release/libneardup_embed.a}"
LD="${LD:-ld}"
OBJCOPY="${OBJCOPY:-objcopy}"
READELF="${READELF:-readelf}"
AR="${AR:-ar}"

[ -f "$in" ] || { echo "static-lib: $in is missing: run \`cargo build --release\` first" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# "BIND NDX NAME" for every named symbol of an object or archive.
symbols() { "$READELF" --syms --wide "$1" | awk '$8 != "" && $1 ~ /^[0-9]+:$/ { print $5, $7, $8 }'; }

# The C ABI: every global function the archive defines under the nd_ prefix.
symbols "$in" | awk '$1 == "GLOBAL" && $2 != "UND" && $3 ~ /^nd_/ { print $3 }' | sort -u >"$tmp/api"
[ -s "$tmp/api" ] || { echo "static-lib: $in defines no nd_ function" >&2; exit 1; }

roots=()
while read -r sym; do roots+=(-u "$sym"); done <"$tmp/api"
"$LD" -r --gc-sections --force-group-allocation "${roots[@]}" "$in" -o "$tmp/neardup.o"

symbols "$tmp/neardup.o" >"$tmp/syms"
awk '$1 == "UNIQUE" && $2 != "UND" { print $3 }' "$tmp/syms" | sort -u >"$tmp/unique"
awk '$2 == "UND" && $3 ~ /^(_Z.*N7rocksdb|rocksdb_|RocksDb|ZSTD_|ZDICT_|LZ4)/ {
  print $3, "__neardup_unbound_" $3 }' "$tmp/syms" | sort -u >"$tmp/hooks"
"$OBJCOPY" --weaken-symbols="$tmp/unique" --redefine-syms="$tmp/hooks" \
  --remove-section=.llvmbc --remove-section=.llvmcmd "$tmp/neardup.o"
"$OBJCOPY" --keep-global-symbols="$tmp/api" "$tmp/neardup.o"

symbols "$tmp/neardup.o" | awk '$1 != "LOCAL" && $2 != "UND" { print $3 }' | sort -u >"$tmp/global"
if ! cmp -s "$tmp/api" "$tmp/global"; then
  echo "static-lib: the object's global definitions are not exactly the nd_ functions:" >&2
  diff "$tmp/api" "$tmp/global" | head -20 >&2
  exit 1
fi

rm -f "$out.tmp"
"$AR" rcsD "$out.tmp" "$tmp/neardup.o"
mv "$out.tmp" "$out"
echo "static-lib: wrote $out ($(wc -l <"$tmp/api") nd_ functions, nothing else global)" >&2
