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
# The Python package (neardup-py/): the wheel, built by maturin in the workspace's release profile
# and target directory (so RocksDB's C++ is not compiled again), checked (abi3, under 10 MB) and
# installed into target/python (no virtual environment needed: pyarrow, pytest and tqdm come from
# setup.sh), then its pytest suite, which compares it with the command line built above.
target="${CARGO_TARGET_DIR:-target}"
rm -f "$target"/wheels/neardup-*.whl
python3 -m maturin build --release --manifest-path neardup-py/Cargo.toml --out "$target/wheels"
wheel="$(ls "$target"/wheels/neardup-*.whl)"
rm -rf "$target/python"
PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps \
  --target "$target/python" "$wheel"
NEARDUP_WHEEL="$wheel" PYTHONPATH="$target/python" \
  python3 -m pytest -p no:cacheprovider neardup-py/tests
