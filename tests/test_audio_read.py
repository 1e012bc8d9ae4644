"""`reasonaudio.io.audio.read_audio`, the one reader of audio files: paths, file objects, every
channel kept, and one line naming the source (or the caller's name for it) when it cannot be read."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from reasonaudio.errors import UserError
from reasonaudio.io.audio import UnreadableAudio, read_audio, read_mono


def test_reads_a_path_and_a_file_object_alike_keeping_every_channel(tmp_path: Path) -> None:
    x = np.stack([np.linspace(-0.5, 0.5, 800), np.linspace(0.25, -0.25, 800)], axis=1).astype(np.float32)
    sf.write(tmp_path / "s.wav", x, 8000, subtype="FLOAT")
    data, sr = read_audio(tmp_path / "s.wav")
    assert sr == 8000 and data.dtype == np.float32 and data.shape == (800, 2)
    np.testing.assert_array_equal(data, x)
    from_bytes, _ = read_audio(io.BytesIO((tmp_path / "s.wav").read_bytes()))
    np.testing.assert_array_equal(from_bytes, x)
    mono, _ = read_mono(tmp_path / "s.wav")
    np.testing.assert_allclose(mono, x.mean(axis=1), atol=1e-7)


def test_an_unreadable_source_is_one_line_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"not audio")
    with pytest.raises(UnreadableAudio, match=r"bad\.wav: cannot read audio \(") as err:
        read_audio(bad)
    assert isinstance(err.value, UserError) and err.value.reason and "\n" not in str(err.value)
    with pytest.raises(UserError, match=r"^--room bad\.wav: cannot read audio"):
        read_audio(bad, "--room bad.wav")
    with pytest.raises(UnreadableAudio, match="cannot read audio"):
        read_audio(io.BytesIO(b"\x00" * 64), "row 3")
