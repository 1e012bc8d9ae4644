"""A model from another installed package: a distribution that declares an entry point in the
`reasonaudio.models` group adds its `--model` spec to `reasonaudio models` and `eval`, with no edit
to reasonaudio. The distribution here is a real one on sys.path (a .dist-info folder with
entry_points.txt, and its module), found by importlib.metadata as an installed one would be."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from reasonaudio.cli import main
from reasonaudio.errors import UserError
from reasonaudio.retrieval import registry

MODULE = '''
import numpy as np

from reasonaudio.retrieval.base import ScoringModel
from reasonaudio.retrieval.registry import ModelMeta


class ByLength(ScoringModel):
    """Scores a clip by how close its duration is to the query's length in words (any ranking will do)."""

    def __init__(self, argument):
        self.scale = float(argument or 1.0)

    def score(self, queries, clips):
        words = np.array([len(t.split()) for t in queries.texts], float)[:, None]
        seconds = np.arange(len(clips.paths), dtype=float)[None, :]
        return -np.abs(words * self.scale - seconds)


MODELS = (
    ModelMeta("by-length", "model", "by-length[:SCALE]", "baseline", lambda argument, options: ByLength(argument),
              vram="CPU", extra="", note="a third-party adapter"),
)
'''


def _install(root: Path, module: str, body: str, entry: str) -> None:
    (root / f"{module}.py").write_text(body)
    info = root / f"{module.replace('_', '-')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[reasonaudio.models]\n{entry}\n")


@pytest.fixture
def plugin_path(tmp_path: Path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    registry._entries.cache_clear()
    yield site
    registry._entries.cache_clear()


def test_an_entry_point_adds_a_model_that_eval_runs(plugin_path: Path, tmp_path: Path, capsys) -> None:
    _install(plugin_path, "fake_models", textwrap.dedent(MODULE), "by-length = fake_models")
    assert "by-length" in registry.model_names()
    assert main(["models", "--json"]) == 0
    listed = {m["name"]: m for m in json.loads(capsys.readouterr().out)}
    assert listed["by-length"]["spec"] == "by-length[:SCALE]"
    assert main(["build", "--out", str(tmp_path / "b"), "--clips", "40", "--queries-per-task", "2", "-q"]) == 0
    assert main(["eval", str(tmp_path / "b"), "--model", "by-length:2", "--out", str(tmp_path / "r"), "--no-figures", "-q"]) == 0
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert results["model"] == "by-length:2" and results["summary"]


def test_a_broken_or_clashing_entry_point_is_one_line_naming_it(plugin_path: Path) -> None:
    _install(plugin_path, "broken_models", "raise ImportError('no torch here')\n", "broken = broken_models")
    with pytest.raises(UserError, match=r"entry point 'broken' = 'broken_models' of broken-models .*no torch here"):
        registry.model_names()
    (plugin_path / "broken_models.py").write_text(
        "from reasonaudio.retrieval.registry import ModelMeta\n"
        "MODELS = (ModelMeta('oracle', 'model', 'oracle', 'baseline', None),)\n"
    )
    registry._entries.cache_clear()
    with pytest.raises(UserError, match="'oracle' is already registered"):
        registry.model_names()
