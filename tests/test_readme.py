"""The README's code runs as written (a README that lies is worse than none).

- the Python API example builds, validates, annotates and evaluates;
- "Evaluate your own model": the precomputed-embeddings recipe (Python, then the `reasonaudio eval`
  line), the minimal adapter (evaluated from Python, and registered as a `--model` spec the way the
  README says), and the mteb example, each run on a small fixture benchmark named `quick`;
- the quick start runs for real and prints every line the README shows (times aside);
- the Python API's refusal of an existing output names its Python keyword (`force=True`,
  `overwrite=True` for `import_folder`), not only the CLI's `--force`;
- every `reasonaudio` subcommand the CLI has appears in the README's command table, every option a
  row shows is one its command accepts, and every `docs/...` link names a file that exists.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import types
import zlib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TEXT = README.read_text()


def section(heading: str) -> str:
    """The README text from `## heading` to the next `## ` heading."""
    start = TEXT.index(f"## {heading}\n")
    end = TEXT.find("\n## ", start + 3)
    return TEXT[start : end if end >= 0 else None]


def blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def run_python(code: str, namespace: dict | None = None) -> dict:
    namespace = {} if namespace is None else namespace
    exec(compile(code, str(README), "exec"), namespace)  # noqa: S102 - the README's own example
    return namespace


def run_cli(line: str) -> int:
    from reasonaudio.cli import main

    argv = shlex.split(line)
    assert argv[0] == "reasonaudio", line
    return main(argv[1:])


@pytest.fixture
def in_tmp(tmp_path: Path):
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(cwd)


@pytest.fixture
def quick(in_tmp: Path, evalfixture) -> Path:
    """A small benchmark where the README's examples expect `quick` (the quick start's build)."""
    return evalfixture.write_fixture(in_tmp / "quick")


def test_python_api_example_runs(in_tmp: Path) -> None:
    from reasonaudio.errors import UserError

    code = blocks(section("Python API"), "python")[0]
    namespace = run_python(code)
    assert namespace["report"].ok
    assert namespace["logic"] == {"all": [{"has": "bell_low"}, {"not": "siren_wail"}]}
    assert namespace["result"].summary["acc@1"]["Avg"]["mean"] >= 0
    # the sentence after the block: load_any_benchmark reads the benchmark's own BEIR folder too
    assert "`ra.load_any_benchmark(path)` also reads BEIR" in section("Python API")
    beir = namespace["ra"].load_any_benchmark(namespace["out"] / "beir")
    assert beir.queries.height == namespace["bench"].queries.height
    # run again (a notebook cell run twice): the refusal tells a Python caller its keyword, not only
    # the CLI's --force
    with pytest.raises(UserError, match=r"holds an earlier benchmark; pass --force \(force=True from Python\)"):
        run_python(code)


def test_import_folder_refusal_names_its_own_keyword(in_tmp: Path) -> None:
    """The API block's `ra.import_folder` replaces a library with `overwrite=True`, and says so."""
    import soundfile as sf

    import reasonaudio as ra
    from reasonaudio.errors import UserError

    (in_tmp / "my_sounds" / "bell").mkdir(parents=True)
    t = np.arange(8000) / 16000
    sf.write(in_tmp / "my_sounds" / "bell" / "a.wav", 0.3 * np.sin(2 * np.pi * 880 * t), 16000)
    ra.import_folder("my_sounds/", "my_atoms/", skip_bad=True)
    with pytest.raises(UserError, match=r"pass --force \(overwrite=True from Python\)"):
        ra.import_folder("my_sounds/", "my_atoms/", skip_bad=True)
    ra.import_folder("my_sounds/", "my_atoms/", skip_bad=True, overwrite=True)


def _encoders(dim: int = 12) -> dict:
    """Stand-ins for the reader's encoders: deterministic, and text and audio in one space of `dim`."""
    import soundfile as sf

    def my_text_encoder(texts: list[str]) -> np.ndarray:
        return np.array([np.random.default_rng(zlib.crc32(t.encode())).standard_normal(dim) for t in texts], np.float32)

    def my_audio_encoder(paths) -> np.ndarray:
        rows = []
        for p in paths:
            x, _ = sf.read(p, dtype="float32")
            power = np.abs(np.fft.rfft(x)) ** 2
            rows.append(np.log1p([b.sum() for b in np.array_split(power, dim)]))
        return np.array(rows, np.float32)

    return {"my_text_encoder": my_text_encoder, "my_audio_encoder": my_audio_encoder}


def quick_ids(bench: Path, table: str) -> list[str]:
    import polars as pl

    return pl.read_parquet(bench / f"{table}.parquet")[{"queries": "query_id", "clips": "clip_id"}[table]].to_list()


def test_precomputed_recipe_runs(quick: Path) -> None:
    own = section("Evaluate your own model")
    run_python(blocks(own, "python")[0], _encoders())
    (line,) = [ln for ln in blocks(own, "bash")[0].splitlines() if ln.startswith("reasonaudio eval")]
    assert run_cli(line + " --quiet --no-figures") == 0
    results = json.loads(Path("runs/mine/results.json").read_text())
    assert results["model"] == "precomputed:q.npz,c.npz"
    assert results["n_queries"] == len(quick_ids(quick, "queries")) and results["n_clips"] == len(quick_ids(quick, "clips"))


def _adapter_code() -> str:
    return next(b for b in blocks(section("Evaluate your own model"), "python") if "class " in b and "EmbeddingModel" in b)


def test_minimal_adapter_runs(quick: Path, capsys) -> None:
    namespace = run_python(_adapter_code())
    mean = namespace["result"].summary["acc@1"]["Avg"]["mean"]
    assert 0 <= mean <= 1
    assert capsys.readouterr().out.strip() == str(mean)


def test_minimal_adapter_registers_as_a_model_spec(quick: Path, monkeypatch, capsys) -> None:
    """What the README says makes it a `--model` spec: a module with MODELS, listed in ADAPTER_MODULES."""
    from reasonaudio.retrieval import registry

    module = types.ModuleType("readme_adapter")
    module.__dict__.update(run_python(_adapter_code()))
    monkeypatch.setitem(sys.modules, "readme_adapter", module)
    monkeypatch.setattr(registry, "ADAPTER_MODULES", (*registry.ADAPTER_MODULES, "readme_adapter"))
    registry._entries.cache_clear()
    try:
        assert run_cli("reasonaudio eval quick --model loudness --out runs/loudness --quiet --no-figures") == 0
        assert run_cli("reasonaudio models --paradigm baseline") == 0
        assert "loudness" in capsys.readouterr().out
    finally:
        registry._entries.cache_clear()


def test_mteb_example_runs(quick: Path) -> None:
    mteb = pytest.importorskip("mteb", reason="needs the hf extra (mteb >= 2)")
    pytest.importorskip("torchcodec", reason="mteb decodes audio with datasets >= 4, which needs torchcodec")
    from mteb.models.model_meta import ModelMeta

    class Tiny:
        """An mteb encoder of text and audio (hashed texts, band energies)."""

        mteb_model_meta = ModelMeta.create_empty(
            overwrites={"name": "reasonaudio-readme/tiny", "revision": "1", "modalities": ["text", "audio"]}
        )
        dim = 8

        def encode(self, inputs, **kwargs):
            out = []
            for batch in inputs:
                if "audio" in batch:
                    for audio in batch["audio"]:
                        power = np.abs(np.fft.rfft(np.asarray(audio["array"], np.float64))) ** 2
                        out.append(np.log1p([b.sum() for b in np.array_split(power, self.dim)]))
                else:
                    out.extend(np.random.default_rng(zlib.crc32(t.encode())).standard_normal(self.dim) for t in batch["text"])
            return np.array(out, np.float32)

        def similarity(self, a, b):
            import torch

            a, b = (torch.nn.functional.normalize(torch.as_tensor(np.asarray(x), dtype=torch.float32), dim=-1) for x in (a, b))
            return a @ b.T

        def similarity_pairwise(self, a, b):
            return self.similarity(a, b).diagonal()

    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    code = next(b for b in blocks(section("Evaluate your own model"), "python") if "mteb.evaluate" in b)
    namespace = run_python(code, {"my_mteb_model": Tiny()})
    names = {r.task_name for r in namespace["results"].task_results}
    assert {n.split("_")[0] for n in names} == {"ReasonAudioT2ARetrieval", "ReasonAudioTwoOption"}, names
    assert mteb is namespace["mteb"]


def test_command_table_lists_every_subcommand() -> None:
    from reasonaudio.cli import COMMANDS

    table = section("Command line")
    for name in COMMANDS:
        assert f"`reasonaudio {name}" in table, name
    assert "audit score" in table


def _quick_start_lines() -> list[str]:
    """The quick start's commands, the bash loop unrolled as bash would (`${m//[:+]/_}`)."""
    lines = []
    for line in blocks(section("Quick start"), "bash")[0].splitlines():
        loop = re.fullmatch(r"for m in (.+); do (reasonaudio eval \S+ --model )\$m( --out runs/)\$\{m//\[:\+\]/_\}; done", line)
        if loop:
            lines += [f"{loop[2]}{m}{loop[3]}{re.sub('[:+]', '_', m)}" for m in loop[1].split()]
        elif not line.startswith("pip install"):  # the extra is installed where this test runs
            lines.append(line)
    return lines


def test_quick_start_prints_what_the_readme_shows(in_tmp: Path, capsys) -> None:
    """The quick start for real (a 1,000-clip build, two evals, a report): every line the README
    shows is printed, the same except for times (and the validate lines the README elides)."""
    pytest.importorskip("rank_bm25", reason="the quick start installs the eval extra")
    commands = _quick_start_lines()
    assert len(commands) == 5 and commands[2].startswith("reasonaudio eval quick --model two-stage:oracle+bm25")
    for line in commands:
        assert run_cli(line + (" --quiet" if " eval " in line else "")) == 0, line
    captured = capsys.readouterr()
    printed = [ln.rstrip() for ln in (captured.out + captured.err).splitlines()]
    shown = section("Quick start").split("What they print", 1)[1]
    shown = re.search(r"```\n(.*?)```", shown, re.S)[1].splitlines()
    times = re.compile(r"\d+\.\d+ s\b")
    ticks = [ln for ln in printed if ln.startswith("  ✓ ")]
    for line in shown:
        if "more ✓ lines" in line:
            first, more = re.fullmatch(r"(.*?)\s+… and (\d+) more ✓ lines", line).groups()
            assert ticks[0] == first and len(ticks) == 1 + int(more), ticks
            continue
        want = times.sub("T s", line)
        assert any(times.sub("T s", got) == want for got in printed), f"not printed: {line}"
    assert "negation" in Path("runs/compare/report.md").read_text()


def test_command_table_options_exist() -> None:
    """Every --option a row of the command table shows is one its command (or subcommand) accepts."""
    import argparse

    from reasonaudio.cli import build_parser

    def children(parser: argparse.ArgumentParser) -> dict:
        return next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})

    commands = children(build_parser())
    for span in re.findall(r"`reasonaudio ([^`]*)`", section("Command line")):
        span = re.sub(r"'[^']*'", "", span)  # a quoted value (a scene condition) holds other commands' options
        words = span.split()
        parser = commands[words[0]]
        nested = children(parser)
        names = re.split(r"\\?\|", words[1]) if len(words) > 1 else []
        parsers = [nested[n] for n in names if n in nested] or [parser]
        accepted = {o for p in parsers for a in p._actions for o in a.option_strings}
        for option in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", span):
            assert option in accepted, f"`reasonaudio {span}`: {option} is not an option of {[p.prog for p in parsers]}"


def test_requirements_name_real_extras_and_ci_run_installs_the_extras_the_readme_lists() -> None:
    """Item 1 of the README's promise: each extra the requirements table names exists in pyproject,
    and the `.ci/run` paragraph lists exactly the extras the script installs."""
    import tomllib

    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    table = section("Requirements").split("| command |", 1)[1]
    # the "extra" column (cells split on unescaped pipes: `detect train\|run` is one cell)
    cells = [re.split(r"(?<!\\)\|", row)[2] for row in table.splitlines() if row.startswith("| `")]
    named = {e for cell in cells for group in re.findall(r"`([a-z0-9,-]+)`", cell) for e in group.split(",")}
    assert named and named <= extras, named - extras
    script = (ROOT / ".ci" / "run").read_text()
    installed = set(re.search(r'pip install -q "\$REASONAUDIO_WHEEL\[([a-z0-9,-]+)\]"', script)[1].split(","))
    listed = re.search(r"extras `([^`]+)`", section("Set up"))[1]
    assert {e.strip() for e in listed.split(",")} == installed


def test_later_blocks_do_not_write_over_what_earlier_ones_made() -> None:
    """A newcomer runs the README in order, then the linked pages' blocks in the same folder: no
    block may write an output an earlier block made (it would be refused without --force)."""

    def outs(text: str) -> set[str]:
        found = set(re.findall(r"--out (\S+)", text)) | set(re.findall(r'ra\.build\("([^"]+)"', text))
        return {o.rstrip("/").split("$")[0].split("{")[0] for o in found}

    readme = outs("".join(blocks(TEXT, "bash") + blocks(TEXT, "python")))
    assert {"bench", "quick", "runs/compare", "api_bench"} <= readme
    for page in ("scale-out.md", "models.md", "audit.md", "real-sounds.md", "hf.md"):
        text = (ROOT / "docs" / page).read_text()
        clash = {o for o in outs("".join(blocks(text, "bash"))) if o in readme or any(o.startswith(r + "/") for r in readme)}
        assert not clash, f"docs/{page} writes {clash}, which the README's blocks already made"


def test_documentation_links_exist() -> None:
    for text, base in [(TEXT, ROOT), *((p.read_text(), p.parent) for p in (ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            assert (base / target).exists(), f"link to missing {target}"


def test_readme_stays_short() -> None:
    assert len(TEXT.splitlines()) <= 325, "move detail to docs/ (the README targets about 250 lines; 325 holds the scenes curve, the detect section and the Hub section)"
