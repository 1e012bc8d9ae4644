"""The one model registry: every view of the models (load_model, two-stage parts, `eval --model` help, the
text-only refusal, `reasonaudio models`) is derived from the entries the adapter modules declare."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from reasonaudio.cli import build_parser, main
from reasonaudio.errors import UserError
from reasonaudio.retrieval import load_model, model_names, parse_spec, registry
from reasonaudio.retrieval.adapters.captioners import FileCaptioner, OracleCaptioner
from reasonaudio.retrieval.adapters.rankers import TwoStageBM25
from reasonaudio.retrieval.base import ScoringModel
from reasonaudio.retrieval.registry import ModelMeta
from reasonaudio.retrieval.spec import parse_options, split_part, split_spec, split_two_stage


class _Fixed(ScoringModel):
    def __init__(self, argument):
        self.argument = argument

    def score(self, queries, clips):
        raise NotImplementedError


@pytest.fixture
def fake_registry(monkeypatch):
    """The registry with one more adapter module: a model, a captioner, a ranker and a text-only encoder."""
    module = types.ModuleType("fake_adapter")
    module.MODELS = (
        ModelMeta("zzmodel", "model", "zzmodel:THING", "baseline", lambda argument, options: _Fixed(argument),
                  note="a fake model"),
        ModelMeta("zzcap", "captioner", "zzcap=DIR", "two-stage captioner", lambda value, options: OracleCaptioner(),
                  note="a fake captioner"),
        ModelMeta("zzrank", "ranker", "zzrank", "two-stage ranker", lambda value, options: _Ranker(), note="a fake ranker"),
        ModelMeta("zztext", "model", "zztext:DIR", "two-stage", lambda argument, options: _Fixed(argument),
                  text_only=True, ranker="zzrank", listed=False),
    )
    monkeypatch.setitem(sys.modules, "fake_adapter", module)
    monkeypatch.setattr(registry, "ADAPTER_MODULES", registry.ADAPTER_MODULES + ("fake_adapter",))
    registry._entries.cache_clear()
    yield module
    registry._entries.cache_clear()


class _Ranker:
    def encode(self, texts):
        raise NotImplementedError


def _eval_help() -> str:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return " ".join(sub.choices["eval"].format_help().split())  # argparse wraps lines


def test_every_view_derives_from_the_registry(fake_registry, capsys, tmp_path: Path) -> None:
    # load_model / parse_spec
    assert "zzmodel" in model_names() and "zztext" in model_names()
    assert parse_spec("zzmodel:a:b") == ("zzmodel", "a:b")
    assert load_model("zzmodel:x").argument == "x"
    # two-stage parts: the new captioner and ranker are accepted and named in the refusals of others
    model = load_model("two-stage:zzcap=somewhere+zzrank")
    assert isinstance(model.captioner, OracleCaptioner) and isinstance(model.encoder, _Ranker)
    with pytest.raises(UserError, match=r"stepaudio=DIR_OR_HUB_ID,code=STEP_AUDIO2_REPO or zzcap=DIR"):
        load_model("two-stage:nosuch+zzrank")
    with pytest.raises(UserError, match=r"bm25 or zzrank"):
        load_model("two-stage:oracle+nosuch")
    # eval --model help: every form, the text-only one left out (eval refuses it)
    text = _eval_help()
    assert "zzmodel:THING" in text and "zzcap=DIR" in text and "; ranker minilm | st=DIR" in text and "zzrank)" in text
    assert "zztext" not in text
    # the text-only refusal names the ranker entry that does its job
    bench = tmp_path / "bench"
    bench.mkdir()
    assert main(["eval", str(bench), "--model", "zztext:/m", "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert "a text encoder cannot embed audio" in capsys.readouterr().err
    assert registry.text_only_refusal("zztext:/m").endswith("e.g. --model two-stage:oracle+zzrank")
    # reasonaudio models
    assert main(["models", "--json"]) == 0
    rows = {(r["kind"], r["name"]): r for r in json.loads(capsys.readouterr().out)}
    assert rows[("model", "zzmodel")]["spec"] == "zzmodel:THING"
    assert rows[("captioner", "zzcap")]["spec"] == "two-stage:zzcap=DIR+RANKER"
    assert rows[("ranker", "zzrank")]["spec"] == "two-stage:CAPTIONER+zzrank"
    assert ("model", "zztext") not in rows


def test_every_entry_is_reachable_by_its_own_spec() -> None:
    for meta in registry.entries():
        if not meta.available:
            with pytest.raises(UserError, match=rf"{meta.name} has no adapter \(left out: no maintained package"):
                parse_spec(meta.form)
            continue
        if meta.kind == "model":
            assert registry.lookup(meta.form.split("[")[0])[0] is meta
        else:
            name, value = split_part(meta.form)
            assert registry.part(meta.kind, meta.form, name, value) is meta
        if meta.listed:
            assert meta.note, meta.name  # `reasonaudio models` says what each listed entry is


def test_text_only_models_point_at_rankers_and_are_refused_as_before() -> None:
    refusals = {spec: registry.text_only_refusal(spec) for spec in ("st:/m/x", "minilm", "st:minilm")}
    assert refusals == {
        "st:/m/x": "--model st:/m/x: a text encoder cannot embed audio; use it as the ranker of a two-stage model, "
                   "e.g. --model two-stage:oracle+st=/m/x",
        "minilm": "--model minilm: a text encoder cannot embed audio; use it as the ranker of a two-stage model, "
                  "e.g. --model two-stage:oracle+minilm",
        "st:minilm": "--model st:minilm: a text encoder cannot embed audio; use it as the ranker of a two-stage "
                     "model, e.g. --model two-stage:oracle+st=minilm",
    }
    assert registry.text_only_refusal("random:1") is None and registry.text_only_refusal("two-stage:oracle+st=x") is None


def test_unknown_names_are_refused_by_listing_the_known() -> None:
    with pytest.raises(UserError) as err:
        parse_spec("bert:/x")
    assert str(err.value) == f"--model 'bert:/x': unknown model 'bert'; expected one of {', '.join(model_names())}"
    assert "audioclip" not in model_names()  # listed by `reasonaudio models`, not loadable
    with pytest.raises(UserError) as err:
        load_model("two-stage:whisper=x+bm25")
    assert str(err.value) == ("two-stage captioner 'whisper=x': expected oracle, oracle-timed, captions=FILE, "
                              "qwen2audio=DIR_OR_HUB_ID[,max_new_tokens=N] or stepaudio=DIR_OR_HUB_ID,code=STEP_AUDIO2_REPO")
    # a known part written without its value, or with one it does not take, is refused the same way
    for spec in ("two-stage:oracle+bge-m3", "two-stage:oracle+minilm=x", "two-stage:oracle+bm25="):
        with pytest.raises(UserError, match="expected minilm, st=DIR, bge-m3=DIR_OR_HUB_ID, qwen3-emb=DIR_OR_HUB_ID or bm25"):
            load_model(spec)
    for spec in ("two-stage:oracle=x+bm25", "two-stage:captions=+bm25", "two-stage:qwen2audio+bm25"):
        with pytest.raises(UserError, match="two-stage captioner"):
            load_model(spec)


def test_two_stage_specs_keep_their_meaning(tmp_path: Path) -> None:
    captions = tmp_path / "a+b.json"  # a '+' in the captioner's path: the ranker follows the last '+'
    captions.write_text(json.dumps({"clip_000": "a dog barking"}))
    model = load_model(f"two-stage:captions={captions}+bm25")
    assert isinstance(model, TwoStageBM25) and isinstance(model.captioner, FileCaptioner)
    assert model.captioner.path == captions
    timed = load_model("two-stage:oracle-timed+bm25")
    assert timed.captioner.timed and not load_model("two-stage:oracle+bm25").captioner.timed


def test_spec_grammar() -> None:
    assert split_spec(" clap:C:\\m:x ") == ("clap", "C:\\m:x")
    assert split_spec("oracle") == ("oracle", None)
    assert split_two_stage("captions=a+b+bm25") == ("captions=a+b", "bm25")
    assert split_two_stage("oracle") is None and split_two_stage(None) is None
    assert split_part("st:/a=b") == ("st", "/a=b") and split_part("st=/a:b") == ("st", "/a:b")
    assert split_part("bm25") == ("bm25", None) and split_part("captions=") == ("captions", "")
    assert parse_options("/m,base=/b", "omniembed:", ("base", "processor")) == ("/m", {"base": "/b"})
    with pytest.raises(UserError, match=r"--model two-stage:stepaudio=/m,x=1: option 'x=1' not understood; expected code=VALUE"):
        parse_options("/m,x=1", "two-stage:stepaudio=", ("code",))
    with pytest.raises(UserError, match=r"--model lco-omni:PATH needs the local path"):
        parse_options(None, "lco-omni:", ())


def test_listing_the_registry_imports_no_optional_package() -> None:
    """Adapter modules are imported to read their entries, so their heavy imports must stay in the loaders."""
    optional = ("torch", "transformers", "sentence_transformers", "torchvision", "peft", "msclap", "laion_clap",
                "wav2clip", "rank_bm25", "librosa", "faiss")
    code = (
        "import sys\n"
        "from reasonaudio.retrieval import registry\n"
        "registry.entries(); registry.model_help()\n"
        f"print([m for m in {optional!r} if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_building_the_cli_does_not_import_the_adapters() -> None:
    code = ("import sys\nfrom reasonaudio.cli import build_parser\nbuild_parser()\n"
            "print(sorted(m for m in sys.modules if m.startswith('reasonaudio.retrieval.adapters')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
