#!/usr/bin/env bash
# Builds the wheel users install: abi3 (one wheel for every CPython >= 3.11), manylinux2014
# (manylinux_2_17: glibc 2.17 and no libstdc++ dependency, since zig links the C++ of the time
# stretcher statically), the extension stripped of its symbols. The same sources give byte-identical
# wheels. Prints the wheel's path as its last line.
#
# usage: scripts/build-wheel.sh [OUT_DIR]      (default dist/)
# needs: cargo (a Rust toolchain) and Python; maturin and ziglang come from PyPI into a private venv
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
tools="${REASONAUDIO_BUILD_TOOLS:-target/wheel-tools}"
if [ ! -x "$tools/bin/maturin" ] || ! "$tools/bin/python" -c "import ziglang" 2>/dev/null; then
    python3 -m venv "$tools"
    "$tools/bin/python" -m pip install -q "maturin>=1.5,<2" "ziglang>=0.13"
fi
# maturin finds zig through the `ziglang` package of the Python that runs it
PATH="$(cd "$tools/bin" && pwd):$PATH"
rm -f "$out"/reasonaudio-*.whl
maturin build --release --zig --compatibility manylinux2014 --strip --out "$out" >&2
ls "$out"/reasonaudio-*.whl
