#!/usr/bin/env bash
# Install reasonaudio with its test and model extras, then run the Rust and Python test suites.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --upgrade pip >/dev/null
python3 -m pip install ".[eval,models,compose,test]"
cargo test --workspace --exclude reasonaudio-py --release
python3 -m pytest -q
