"""The transformers adapter on a tiny randomly initialised Qwen2-Audio saved locally (no download).

The checkpoint comes from `qwen_tiny.save_tiny_qwen2_audio` (real processor, random tiny model). Output
text is random-weight noise; the test checks the path runs end to end and decodes.
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from reasonaudio.compose.runner import Qwen2AudioModel, load_model  # noqa: E402


def test_tiny_qwen2_audio_generates(qwen_tiny, tmp_path):
    qwen_tiny.save_tiny_qwen2_audio(tmp_path / "tiny")
    wav = tmp_path / "a.wav"
    sf.write(wav, (0.1 * np.sin(np.arange(24000) / 10)).astype(np.float32), 24000)  # resampled to 16 kHz
    model = load_model(f"qwen2audio:{tmp_path / 'tiny'}", max_new_tokens=5, device="cpu")
    assert isinstance(model, Qwen2AudioModel)
    out1 = model.generate(str(wav), "Which segment has rain? Reply with <segment>1</segment>.")
    out2 = model.generate(str(wav), "Which segment has rain? Reply with <segment>1</segment>.")
    assert isinstance(out1, str) and out1 and out1 == out2  # seeded weights, greedy: fixed non-empty text


def test_missing_model_dir_is_a_user_error(tmp_path):
    from reasonaudio.errors import UserError
    with pytest.raises(UserError, match="no such Qwen2-Audio model directory"):
        load_model(f"qwen2audio:{tmp_path / 'nope'}")
