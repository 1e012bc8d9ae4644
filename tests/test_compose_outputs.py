"""Compose's outputs through the one output discipline (reasonaudio.io.outputs): a prompts file, a model's
outputs or a results folder may live inside their set but never over one of the set's own files;
--force rules are unchanged; files get the mode a plain open gives (0o666 less the umask)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from reasonaudio.cli import main
from reasonaudio.compose.build import ComposeConfig, build_set, set_input
from reasonaudio.errors import UserError
from reasonaudio.io.outputs import InputFolder, check_not_an_input, header_kind, output_directory, output_file, write_atomic

SR = 16000
HERE = Path(__file__).parent
FAKE_MODEL = f"cmd:{sys.executable} {HERE / 'support' / 'compose_fake_model.py'}"


@pytest.fixture(scope="module")
def built(compose_fakes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("compose-outputs") / "set"
    build_set(out, ComposeConfig(cue="environment", task="math", n=4, snrs=(10.0,), sample_rate=SR, seed=1),
              source=compose_fakes.ToneSource(SR), library=compose_fakes.ToneLibrary(SR))
    return out


@pytest.fixture
def a_set(built: Path, tmp_path: Path) -> Path:
    """A fresh copy per test (tests write into the set)."""
    import shutil

    copy = tmp_path / "set"
    shutil.copytree(built, copy)
    return copy


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@contextmanager
def _umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --- the discipline itself ------------------------------------------------------------------------

def test_an_input_folder_takes_new_files_but_refuses_its_own(tmp_path: Path) -> None:
    root = tmp_path / "set"
    (root / "audio").mkdir(parents=True)
    own = (root / "manifest.json", root / "audio" / "a.wav")
    for f in own:
        f.write_text("x")
    folder = InputFolder(root, own)
    check_not_an_input(root / "prompts.jsonl", [folder])                 # a new file inside: fine
    check_not_an_input(root / "results", [folder])                       # a new folder inside: fine
    with pytest.raises(UserError, match="is .*manifest.json, a file of the input"):
        check_not_an_input(root / "manifest.json", [folder])
    with pytest.raises(UserError, match="contains .*a.wav, a file of the input"):
        check_not_an_input(root / "audio", [folder])
    with pytest.raises(UserError, match="is the input"):
        check_not_an_input(root, [folder])
    with pytest.raises(UserError, match="contains the input"):
        check_not_an_input(tmp_path, [folder])
    # a plain path input keeps the plain rule: nothing inside it
    with pytest.raises(UserError, match="lies inside the input"):
        check_not_an_input(root / "prompts.jsonl", [root])


def test_write_atomic_and_output_file_follow_the_umask(tmp_path: Path) -> None:
    for mask in (0o022, 0o027, 0o077):
        with _umask(mask):
            write_atomic(tmp_path / f"w{mask:o}.txt", "x")
            with output_file(tmp_path / f"o{mask:o}.txt", header_kind("text", "y")) as tmp:
                tmp.write_text("y")
            with output_directory(tmp_path / f"d{mask:o}", "compose results") as d:
                write_atomic(d / "results.json", "{}")
        assert _mode(tmp_path / f"w{mask:o}.txt") == 0o666 & ~mask
        assert _mode(tmp_path / f"o{mask:o}.txt") == 0o666 & ~mask
        assert _mode(tmp_path / f"d{mask:o}" / "results.json") == 0o666 & ~mask
    assert not list(tmp_path.glob(".*tmp*"))


def test_set_input_names_the_files_its_reader_uses(a_set: Path, tmp_path: Path) -> None:
    folder = set_input(a_set)
    assert isinstance(folder, InputFolder)
    names = {str(Path(f).relative_to(a_set)) for f in folder.files}
    assert {"manifest.json", "metadata.jsonl", ".reasonaudio-output"} <= names
    rows = [json.loads(x) for x in (a_set / "metadata.jsonl").read_text().splitlines()]
    assert {r["audio"] for r in rows} <= names
    not_a_set = tmp_path / "folder"
    not_a_set.mkdir()
    assert set_input(not_a_set) == not_a_set  # not readable as a set: nothing may go inside it


# --- compose commands -------------------------------------------------------------------------------

@pytest.mark.parametrize("style", ["project", "study"])
def test_prompts_file_inside_its_set(a_set: Path, style: str, capsys) -> None:
    before = _digest(a_set)
    out = a_set / "prompts.jsonl"
    assert main(["compose", "prompts", str(a_set), "--out", str(out), "--prompts", style]) == 0
    assert len(out.read_text().splitlines()) == 4 * 5
    # --force rules unchanged: a second write needs --force, and then replaces it
    assert main(["compose", "prompts", str(a_set), "--out", str(out), "--prompts", style]) == 2
    assert "pass --force" in capsys.readouterr().err
    assert main(["compose", "prompts", str(a_set), "--out", str(out), "--prompts", style, "--force",
                 "--layers", "selection"]) == 0
    assert len(out.read_text().splitlines()) == 4
    after = _digest(a_set)
    assert after.pop("prompts.jsonl") and after == before
    assert sorted(p.name for p in a_set.iterdir() if p.name.startswith(".")) == [".reasonaudio-output"]


@pytest.mark.parametrize("own", ["metadata.jsonl", "manifest.json", ".reasonaudio-output", "audio/s00001.wav"])
def test_prompts_never_replace_a_file_of_the_set(a_set: Path, own: str, capsys) -> None:
    before = _digest(a_set)
    assert main(["compose", "prompts", str(a_set), "--out", str(a_set / own), "--force"]) == 2
    assert "a file of the input" in capsys.readouterr().err
    assert _digest(a_set) == before


def test_prompts_refuse_the_set_itself_and_its_audio_folder(a_set: Path, capsys) -> None:
    before = _digest(a_set)
    assert main(["compose", "prompts", str(a_set), "--out", str(a_set), "--force"]) == 2
    assert "is the input" in capsys.readouterr().err
    assert main(["compose", "prompts", str(a_set), "--out", str(a_set / "audio"), "--force"]) == 2
    assert "contains" in capsys.readouterr().err
    assert _digest(a_set) == before


def test_run_and_score_inside_the_set(a_set: Path, capsys) -> None:
    before = _digest(a_set)
    outputs = a_set / "outputs.jsonl"
    assert main(["compose", "run", str(a_set), "--model", FAKE_MODEL, "--out", str(outputs)]) == 0
    assert len(outputs.read_text().splitlines()) == 4 * 5
    assert main(["compose", "run", str(a_set), "--model", FAKE_MODEL, "--out", str(outputs)]) == 2
    assert "pass --force" in capsys.readouterr().err
    assert main(["compose", "run", str(a_set), "--model", FAKE_MODEL, "--out", str(a_set / "metadata.jsonl"),
                 "--force"]) == 2
    assert "a file of the input" in capsys.readouterr().err
    results = a_set / "results"
    assert main(["compose", "score", str(a_set), "--outputs", str(outputs), "--out", str(results)]) == 0
    assert (results / "results.json").is_file()
    assert main(["compose", "score", str(a_set), "--outputs", str(outputs), "--out", str(results)]) == 2
    assert "pass --force" in capsys.readouterr().err
    assert main(["compose", "score", str(a_set), "--outputs", str(outputs), "--out", str(results), "--force"]) == 0
    assert main(["compose", "score", str(a_set), "--outputs", str(outputs), "--out", str(a_set / "audio"),
                 "--force"]) == 2
    assert "a file of the input" in capsys.readouterr().err
    assert main(["compose", "score", str(a_set), "--outputs", str(outputs), "--out", str(outputs), "--force"]) == 2
    assert "is the input" in capsys.readouterr().err
    after = {k: v for k, v in _digest(a_set).items() if not k.startswith(("results/", "outputs.jsonl"))}
    assert after == before


def test_compose_outputs_follow_the_umask(a_set: Path, tmp_path: Path) -> None:
    with _umask(0o022):
        assert main(["compose", "prompts", str(a_set), "--out", str(tmp_path / "p.jsonl")]) == 0
        assert main(["compose", "run", str(a_set), "--model", FAKE_MODEL, "--out", str(tmp_path / "o.jsonl")]) == 0
        assert main(["compose", "score", str(a_set), "--outputs", str(tmp_path / "o.jsonl"),
                     "--out", str(tmp_path / "r")]) == 0
    with _umask(0o027):
        assert main(["compose", "prompts", str(a_set), "--out", str(tmp_path / "p2.jsonl")]) == 0
    assert _mode(tmp_path / "p.jsonl") == 0o644 and _mode(tmp_path / "o.jsonl") == 0o644
    assert {p.name: _mode(p) for p in (tmp_path / "r").iterdir() if p.is_file()} == \
        {p.name: 0o644 for p in (tmp_path / "r").iterdir() if p.is_file()}
    assert _mode(tmp_path / "p2.jsonl") == 0o640


def test_inspect_png_follows_the_umask(tmp_path: Path) -> None:
    bench = tmp_path / "b"
    assert main(["build", "--out", str(bench), "--clips", "40", "--queries-per-task", "2", "--quiet"]) == 0
    with _umask(0o022):
        assert main(["inspect", str(bench), "mix_0000", "--png", str(tmp_path / "q.png")]) == 0
    assert _mode(tmp_path / "q.png") == 0o644
    assert (tmp_path / "q.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- a missing optional package: exit 2 with the install hint, not a traceback ------------------------

@pytest.mark.parametrize("scoring", ["robust", "study"])
def test_score_without_jiwer_names_the_extra(compose_fakes, built: Path, tmp_path: Path, monkeypatch, capsys,
                                            scoring) -> None:
    from reasonaudio.compose import study

    pytest.importorskip("whisper_normalizer")
    asr = tmp_path / "asr"
    build_set(asr, ComposeConfig(cue="gender", task="asr", n=4, sample_rate=SR, seed=2),
              source=compose_fakes.ToneSource(SR))
    rows = [json.loads(x) for x in (asr / "metadata.jsonl").read_text().splitlines()]
    outputs = tmp_path / "o.jsonl"
    outputs.write_text("".join(json.dumps({"id": r["id"], "layer": "compositional", "output": "<asr>hello</asr>"}) + "\n"
                               for r in rows))
    monkeypatch.setitem(sys.modules, "jiwer", None)  # `import jiwer` now raises ImportError
    study.jiwer_module.cache_clear()
    try:
        rc = main(["compose", "score", str(asr), "--outputs", str(outputs), "--out", str(tmp_path / "r"),
                   "--scoring", scoring])
        err = capsys.readouterr().err
        assert rc == 2, err
        assert "needs the Python package 'jiwer'" in err and "reasonaudio[compose]" in err and "Traceback" not in err
        assert not (tmp_path / "r").exists()
        # a set without transcription is scored without it
        math_rows = [json.loads(x) for x in (built / "metadata.jsonl").read_text().splitlines()]
        math_out = tmp_path / "m.jsonl"
        math_out.write_text("".join(json.dumps({"id": r["id"], "layer": "compositional", "output": "<ans>1</ans>"})
                                    + "\n" for r in math_rows))
        assert main(["compose", "score", str(built), "--outputs", str(math_out), "--out", str(tmp_path / "m"),
                     "--scoring", scoring]) == 0
    finally:
        study.jiwer_module.cache_clear()
