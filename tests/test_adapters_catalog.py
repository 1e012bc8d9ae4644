"""`reasonaudio models` and the catalogue behind it: every registered spec is listed, with its needs."""

from __future__ import annotations

import json

from reasonaudio.cli import main
from reasonaudio.retrieval import model_names, parse_spec
from reasonaudio.retrieval.catalog import CATALOG, card


def test_every_registered_model_has_a_catalogue_entry_and_every_spec_parses() -> None:
    names = {c.name for c in CATALOG}
    assert set(model_names()) - {"two-stage"} <= names
    for entry in CATALOG:
        if entry.spec.startswith("("):
            continue  # AudioCLIP: listed, explained, not loadable
        name, _ = parse_spec(entry.spec.split("[")[0])
        assert name in model_names()
        assert entry.vram and entry.sample_rate and entry.max_audio


def test_the_studys_models_are_all_listed() -> None:
    study = " | ".join(c.study for c in CATALOG)
    for model in ("LCO-Embedding-Omni-3B", "LCO-Embedding-Omni-7B", "e5-omni-7B", "OmniEmbed-7B", "CLAP (Elizalde",
                  "AudioCLIP", "Wav2CLIP", "Qwen2-Audio", "Step-Audio", "BGE-M3", "Qwen3-Embedding"):
        assert model in study, model
    assert card("lco-omni").sample_rate == "16 kHz" and card("lco-omni").max_audio == "30 s"
    assert card("msclap").sample_rate == "44.1 kHz"


def test_models_command_lists_specs_needs_and_package_status(capsys) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "omniembed:LORA_DIR,base=THINKER_DIR" in out and "e5-omni:DIR" in out
    assert "needs: " in out and "packages: " in out
    assert "AudioCLIP" in out and "not available" in out
    assert main(["models", "--paradigm", "MLLM", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == ["lco-omni", "e5-omni", "omniembed"]
    assert all(set(r) >= {"spec", "vram", "sample_rate", "max_audio", "missing", "status"} for r in rows)
    # a package that cannot be installed next to this project is reported, not imported
    msclap = next(c for c in CATALOG if c.name == "msclap")
    assert "msclap" in msclap.packages and msclap.extra == ""
