"""The Step-Audio 2 captioner of `two-stage:stepaudio=DIR[,code=REPO]+RANKER`: its refusals.

Running it needs the Step-Audio2 repository's own code (its stepaudio2.py / utils.py hold the input
format; they are not a package) and the 8B checkpoint, neither of which can be had here, so only the
one-line refusals are checked; the captioning path itself is exercised on a GPU with real weights.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonaudio.errors import UserError
from reasonaudio.retrieval import load_model

pytest.importorskip("torch")
pytest.importorskip("transformers")


def test_missing_model_directory(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such Step-Audio model directory"):
        load_model(f"two-stage:stepaudio={tmp_path / 'Step-Audio-2-mini'}+bm25")


def test_code_directory_must_be_a_step_audio2_checkout(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "repo").mkdir()
    with pytest.raises(UserError, match=r"not a Step-Audio2 repository checkout \(no stepaudio2.py\)"):
        load_model(f"two-stage:stepaudio={tmp_path / 'model'},code={tmp_path / 'repo'}+bm25")


def test_without_the_repository_code_the_user_is_told_to_pass_it(tmp_path: Path) -> None:
    try:
        import stepaudio2  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("a stepaudio2 module is importable here")
    (tmp_path / "model").mkdir()
    with pytest.raises(UserError, match="needs the Step-Audio2 repository's code .* pass its checkout with stepaudio=.*,code=DIR"):
        load_model(f"two-stage:stepaudio={tmp_path / 'model'}+bm25")


def test_unknown_captioner_lists_stepaudio() -> None:
    with pytest.raises(UserError, match=r"qwen2audio=DIR_OR_HUB_ID\[,max_new_tokens=N\] or stepaudio=DIR_OR_HUB_ID"):
        load_model("two-stage:whisper=x+bm25")
