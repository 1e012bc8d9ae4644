"""The embedded library's exact bits, pinned: a refactor of rust/core/src/atoms/ must not move one.

The digests hold at 8, 16, 44.1 and 48 kHz. A deliberate change of a recipe changes them (and every benchmark built from the default
library): record the new ones here in the same commit, with the reason.
"""

from __future__ import annotations

import hashlib

import pytest

from reasonaudio import _core

PINNED = {
    8000: "11187cfb4d2654e4ccf70992dca5613a3b23ae258d1f5ee0f122460a473aa578",
    16000: "d5a828d2b4e30a57008564030ee2a52349ffa6f02be9ad0350e9fbedad43a9a4",
    44100: "066b3dacb8a894612068287dedc374062c976ab903359e191b730b96acbc9c6a",
    48000: "de0e3c7b93b1feeb4d48d5a072193bf51874b05951d5d70537619db656eee8af",
}


def digest(sample_rate: int) -> str:
    """sha256 of labels, phrases and families (newline-joined), then the audio and offsets bytes."""
    labels, phrases, families, audio, offsets = _core.procedural_atoms(sample_rate)
    h = hashlib.sha256()
    h.update("\n".join(labels + phrases + families).encode())
    h.update(audio.astype("<f4").tobytes())
    h.update(offsets.astype("<u8").tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("sample_rate", list(PINNED))
def test_library_bits_are_pinned(sample_rate: int) -> None:
    assert digest(sample_rate) == PINNED[sample_rate]
