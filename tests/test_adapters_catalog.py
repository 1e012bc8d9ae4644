"""`reasonaudio models` and the catalogue behind it: the study's models are listed, with their needs."""

from __future__ import annotations

import json

import pytest

from reasonaudio.cli import main
from reasonaudio.retrieval import registry
from reasonaudio.retrieval.catalog import card, cards


def test_the_catalogue_is_the_registrys_listed_entries() -> None:
    assert cards() == registry.listing()
    assert {(c.kind, c.name) for c in cards()} == {(m.kind, m.name) for m in registry.entries() if m.listed}
    assert [c.name for c in cards("MLLM")] == ["lco-omni", "e5-omni", "omniembed"]
    with pytest.raises(KeyError, match="pass kind="):
        card("oracle")  # the qrels baseline and the true-events captioner
    assert card("oracle", kind="captioner").spec == "two-stage:oracle+RANKER"


def test_the_studys_models_are_all_listed() -> None:
    study = " | ".join(c.study for c in cards())
    for model in ("LCO-Embedding-Omni-3B", "LCO-Embedding-Omni-7B", "e5-omni-7B", "OmniEmbed-7B", "CLAP (Elizalde",
                  "AudioCLIP", "Wav2CLIP", "Qwen2-Audio", "Step-Audio", "BGE-M3", "Qwen3-Embedding"):
        assert model in study, model
    assert card("lco-omni").sample_rate == "16 kHz" and card("lco-omni").max_audio == "30 s"
    assert card("msclap").sample_rate == "44.1 kHz"
    assert card("lco-omni").follows.startswith("github.com/LCO-Embedding/LCO-Embedding")


def test_models_command_lists_specs_needs_and_package_status(capsys) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "omniembed:LORA[,base=THINKER]" in out and "e5-omni:DIR" in out
    assert "needs: " in out and "packages: " in out and "follows: " in out
    assert "AudioCLIP" in out and "not available" in out
    assert "two-stage:stepaudio=DIR_OR_HUB_ID,code=STEP_AUDIO2_REPO+RANKER" in out and "two-stage:CAPTIONER+bm25" in out
    assert main(["models", "--paradigm", "MLLM", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == ["lco-omni", "e5-omni", "omniembed"]
    assert all(set(r) >= {"spec", "vram", "sample_rate", "max_audio", "missing", "status"} for r in rows)
    # a package that cannot be installed next to this project is reported, not imported
    assert "msclap" in card("msclap").packages and card("msclap").extra == ""
    assert main(["models", "--paradigm", "detect", "--json"]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == ["detect"]
