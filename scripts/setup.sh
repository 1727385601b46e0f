#!/usr/bin/env bash
# Installs what building neardup needs on a fresh Debian machine with the Rust toolchain:
# libclang (bindgen, for the rocksdb crate's bindings), a C++ compiler (RocksDB, the C ABI test)
# and valgrind (the C ABI test runs under it).
# Idempotent: installs only what is missing. Needs root (or sudo) only when something is missing.
set -euo pipefail

missing=()
have_libclang() {
  ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 || ls /usr/lib/x86_64-linux-gnu/libclang*.so* >/dev/null 2>&1
}
have_libclang || missing+=(libclang-dev)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
