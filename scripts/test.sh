#!/usr/bin/env bash
# Install reasonaudio with every extra its tests use, then run the Rust and Python test suites.
set -euo pipefail
cd "$(dirname "$0")/.."
# espeak-ng is the offline TTS voice of `reasonaudio compose` (Debian package; skipped where apt is absent)
if ! command -v espeak-ng >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq espeak-ng >/dev/null) || echo "warning: could not install espeak-ng; TTS tests will skip"
fi
python3 -m pip install -q --upgrade pip
python3 -m pip install -q ".[eval,models,compose,test]"
cargo test -p reasonaudio-core --release
# the package lives under python/, so the repository root on sys.path never shadows the installed build
python3 -m pytest -q -p no:cacheprovider --rootdir . tests
