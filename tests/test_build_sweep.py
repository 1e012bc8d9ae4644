"""Every combination of build parameters either builds a benchmark that the validator passes, or is
refused up front with one clear line and nothing written (issue: builds that work at every size).

Parameters are drawn by hypothesis over small corpora; the libraries range from 3 labels (one of
the study's corner cases: max_events must shrink to fit) to 1,000 labels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasonaudio import _core
from reasonaudio.atoms import AtomLibrary
from reasonaudio.builder import AUDIO_FORMATS, BuildConfig, build
from reasonaudio.errors import UserError
from reasonaudio.validate import validate_benchmark


def _library(root: Path, n_labels: int, exemplars: int = 1) -> Path:
    """A library of `n_labels` distinct labels: procedural atoms, pitch-shifted copies past 200;
    with `exemplars` > 1, each label has that many recordings (the atom at other speeds), the
    first in `train`, the others in `test` (contract v2)."""
    base = AtomLibrary.procedural(16_000)
    ids, labels, phrases, chunks, splits = [], [], [], [], []
    for i in range(n_labels):
        if exemplars > 1:
            for k in range(exemplars):
                x = base.audio(i * 7 % len(base))
                if k:
                    x = _core.resample(np.ascontiguousarray(x), 16_000, int(16_000 * (1 + 0.2 * k)))
                ids.append(f"atom_{i:04d}_{k}")
                labels.append(base.labels[i * 7 % len(base)])
                phrases.append(base.phrases[i * 7 % len(base)])
                chunks.append(np.asarray(x, dtype=np.float32))
                splits.append("train" if k == 0 else "test")
            continue
        j, round_ = i % len(base), i // len(base)
        audio = base.audio(j)
        if round_:
            # a new pitch for every round keeps labels distinct sounds, not copies
            audio = _core.resample(np.ascontiguousarray(audio), 16_000, 16_000 + 1_500 * round_)
            audio = _core.finish_atom(np.ascontiguousarray(audio, dtype=np.float32), 16_000)
        ids.append(f"atom_{i:04d}")
        labels.append(base.labels[j] if not round_ else f"{base.labels[j]}_v{round_}")
        words = ["", "two", "three", "four", "five"][round_]
        phrases.append(base.phrases[j] if not round_ else f"{base.phrases[j]} in register {words}")
        chunks.append(np.asarray(audio, dtype=np.float32))
    lib = AtomLibrary(
        atom_ids=ids,
        labels=labels,
        phrases=phrases,
        families=["test"] * len(ids),
        sources=["test"] * len(ids),
        licenses=["CC0-1.0"] * len(ids),
        sample_rate=16_000,
        audio_flat=np.concatenate(chunks),
        offsets=np.concatenate([[0], np.cumsum([len(c) for c in chunks])]).astype(np.uint64),
        splits=splits,
    )
    return lib.save(root / f"lib{n_labels}x{exemplars}")


@pytest.fixture(scope="module")
def libraries(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("libs")
    libraries = {"procedural": "procedural", **{str(n): str(_library(root, n)) for n in (3, 12, 1000)}}
    libraries["12x3"] = str(_library(root, 12, exemplars=3))
    return libraries


def _check(out: Path, config: BuildConfig) -> None:
    try:
        build(out, config, progress=False)
    except UserError as err:
        message = str(err)
        print(f"refused: {message}")
        assert "\n" not in message and message, "a refusal is one line"
        assert not out.exists(), "a refused build writes nothing"
        assert not list(out.parent.glob(f".{out.name}.tmp-*")), "no temporary left behind"
        return
    print(f"built: {config}")
    report = validate_benchmark(out, check_audio=True)
    assert report.ok, report.format_text()
    manifest = json.loads((out / "manifest.json").read_text())
    counts = manifest["counts"]
    assert counts["clips"] == config.clips
    per_task = [v for v in counts["queries_by_task"].values() if v]
    assert len(set(per_task)) <= 1, "tasks hosted get the same number of queries"
    assert all(v <= config.queries_per_task for v in per_task)
    if config.queries_per_task:
        assert counts["queries"] > 0


sizes = st.sampled_from([50, 80, 150, 400])


@settings(
    max_examples=18,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    clips=sizes,
    overlap=st.sampled_from([0.0, 1.0, 0.4]) | st.floats(0.0, 1.0),
    per_task=st.sampled_from([1, 3, 500]) | st.integers(0, 40),
    max_clip_s=st.sampled_from([30.0, 18.0, 12.0, 4.0]),
    sample_rate=st.sampled_from([8_000, 16_000, 22_050, 48_000]),
    audio_format=st.sampled_from(sorted(AUDIO_FORMATS)),
    library=st.sampled_from(["procedural", "3", "12", "1000", "12x3"]),
    exemplar_split=st.sampled_from(["all", "all", "test"]),
    plan=st.sampled_from([{}, {"max_events": 3}, {"min_events": 3, "max_events": 5}, {"duration_weights": [0.2, 0.3, 0.5]}, {"max_events": 50}]),
    seed=st.integers(0, 2**32),
)
def test_every_combination_builds_a_valid_benchmark_or_is_refused_cleanly(
    tmp_path_factory, libraries, clips, overlap, per_task, max_clip_s, sample_rate, audio_format, library, exemplar_split, plan, seed
) -> None:
    out = tmp_path_factory.mktemp("sweep") / "bench"
    config = BuildConfig(
        clips=clips,
        overlap_fraction=overlap,
        queries_per_task=per_task,
        atoms=libraries[library],
        sample_rate=sample_rate,
        seed=seed,
        max_clip_s=max_clip_s,
        audio_format=audio_format,
        plan=dict(plan),
        exemplar_split=exemplar_split,
    )
    _check(out, config)


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        (dict(plan={"sample_rate": 7}), "--sample-rate"),
        (dict(plan={"max_clip_s": 7}), "--max-clip-s"),
        (dict(plan={"no_such_key": 1}), "unknown planner parameter"),
        (dict(plan={"max_events": "many"}), "--plan max_events"),
        (dict(threads=100_000), "--threads"),
        (dict(max_clip_s=float("nan")), "--max-clip-s"),
        (dict(overlap_fraction=float("nan")), "--overlap-fraction"),
        (dict(max_clip_s=3.0), "--plan max_events"),
    ],
)
def test_bad_parameters_are_refused_up_front_naming_the_knob(tmp_path: Path, kwargs, expected) -> None:
    out = tmp_path / "bench"
    with pytest.raises(UserError) as err:
        build(out, BuildConfig(clips=60, queries_per_task=1, **kwargs), progress=False)
    assert expected in str(err.value)
    assert "line 1 column" not in str(err.value)
    assert not out.exists() and not list(tmp_path.iterdir())


def test_a_small_default_build_scales_its_queries_and_says_so(tmp_path: Path, caplog) -> None:
    # the library says it through the `reasonaudio` logger (the CLI prints its warnings even with --quiet)
    with caplog.at_level("WARNING", logger="reasonaudio"):
        out = build(tmp_path / "b", BuildConfig(clips=300), progress=False)
    note = caplog.text
    assert "300 clips host" in note and "asked for 200" in note
    manifest = json.loads((out / "manifest.json").read_text())
    hosted = manifest["counts"]["queries_by_task"]["negation"]
    assert 0 < hosted < 200
    # the scaled build is exactly the build that asks for that number
    again = build(tmp_path / "c", BuildConfig(clips=300, queries_per_task=hosted), progress=False)
    assert (again / "queries.parquet").read_bytes() == (out / "queries.parquet").read_bytes()
    assert json.loads((again / "manifest.json").read_text())["hashes"] == manifest["hashes"]
