"""The exception hierarchy at the Rust boundary: every binding raises the `reasonaudio.errors` class of
its failure's kind, each still the builtin (ValueError, OSError, TypeError) callers caught before."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from reasonaudio import _core, errors

LOGIC = '{"all": [{"has": "a"}]}'


def test_hierarchy_keeps_the_builtin_bases() -> None:
    assert issubclass(errors.UserError, errors.ReasonAudioError)
    assert issubclass(errors.ValidationError, errors.UserError)
    for kind in (errors.PlanError, errors.AnnotateError, errors.MixError, errors.ResampleError, errors.AtomError):
        assert issubclass(kind, errors.CoreError) and issubclass(kind, ValueError), kind
    assert issubclass(errors.LogicError, errors.AnnotateError) and issubclass(errors.EventError, errors.AnnotateError)
    assert issubclass(errors.AudioWriteError, OSError) and issubclass(errors.AudioWriteError, errors.CoreError)
    assert issubclass(errors.ColumnTypeError, TypeError)
    # What the CLI prints in one line stays apart from what the core raises for Python to wrap.
    assert not issubclass(errors.CoreError, errors.UserError)
    err = errors.AudioWriteError("clip 3: cannot write x: denied")
    assert str(err) == "clip 3: cannot write x: denied" and err.errno is None


def test_plan_errors() -> None:
    with pytest.raises(errors.PlanError, match="^plan parameters: "):
        _core.plan_params_check("{not json", 10)
    bad = json.loads(_core.plan_params_default())
    bad["duration_weights"] = [-1.0] * len(bad["duration_weights"])
    with pytest.raises(errors.PlanError, match="invalid plan parameters"):
        _core.plan_params_check(json.dumps(bad), 10)
    natives = np.full(20, 8000, np.int64)
    with pytest.raises(errors.PlanError, match="pattern must be 'sequential' or 'overlap', got \"both\""):
        _core.plan_clip(natives, _core.plan_params_default(), _core.ClipRequest(), pattern="both", seed=0, key=0)
    with pytest.raises(errors.PlanError, match="atom index 20 out of range"):
        request = _core.ClipRequest(required=[20])
        _core.plan_clip(natives, _core.plan_params_default(), request, pattern="sequential", seed=0, key=0)
    with pytest.raises(errors.PlanError, match="overlap_fraction 2 is not within"):
        _core.plan_corpus(natives, 10, 2.0, 0, _core.plan_params_default())


@pytest.mark.parametrize(
    ("request_args", "message"),
    [
        ({"required": [3, 3]}, "an atom is required twice"),
        ({"required": [3], "excluded": [3]}, "an atom is both required and excluded"),
        ({"required": [3, 4], "required_bins": [0]}, "required_bins must be empty or match required"),
        ({"required": [3], "overlap_first_pair": True}, "overlap_first_pair needs two required atoms"),
    ],
)
def test_clip_request_is_checked_when_made(request_args: dict, message: str) -> None:
    with pytest.raises(errors.PlanError, match=f"^invalid clip request: {message}"):
        _core.ClipRequest(**request_args)


def test_clip_request_plans_what_it_asks_for() -> None:
    with pytest.raises(TypeError):
        _core.ClipRequest([3, 4])  # type: ignore[misc]
    request = _core.ClipRequest(required=[4, 3], ordered=True, excluded=[0], required_bins=[None, 1], n_events=3)
    assert (request.required, request.ordered, request.excluded) == ([4, 3], True, [0])
    assert (request.required_bins, request.overlap_first_pair, request.n_events) == ([None, 1], False, 3)
    natives = np.full(20, 8000, np.int64)
    plan = _core.plan_clip(natives, _core.plan_params_default(), request, pattern="sequential", seed=5, key=9)
    atoms = list(plan["ev_atom"][np.argsort(plan["ev_onset"], kind="stable")])
    assert len(atoms) == 3 and 0 not in atoms and atoms.index(4) < atoms.index(3)
    again = _core.plan_clip(natives, _core.plan_params_default(), request, pattern="sequential", seed=5, key=9)
    assert all(np.array_equal(plan[k], again[k]) for k in plan)


def _annotate(ev_clip, logic=LOGIC, labels=("a",)):
    n = len(ev_clip)
    table = _core.EventLabels(clip=np.array(ev_clip, np.uint32), label=np.zeros(n, np.uint32), onset=np.zeros(n, np.int64),
                              offset=np.ones(n, np.int64), n_clips=1, rate=10.0, labels=list(labels))
    return _core.annotate_csr(table, [logic], ["q7"])


def test_annotate_errors_by_kind() -> None:
    indptr, clips = _annotate([0])
    assert indptr.tolist() == [0, 1] and clips.tolist() == [0]
    # A label outside the vocabulary is allowed (it matches no clip); a malformed constraint is not.
    assert _annotate([0], logic='{"all": [{"has": "zebra"}]}')[1].tolist() == []
    with pytest.raises(errors.LogicError, match=r"query q7, constraint 0 .*expected a list of two labels") as bad_logic:
        _annotate([0], logic='{"all": [{"before": ["a"]}]}')
    assert isinstance(bad_logic.value, ValueError)
    with pytest.raises(errors.LogicError, match="query q7: logic is not valid JSON"):
        _annotate([0], logic="[1, 2")
    with pytest.raises(errors.EventError, match="event 0: clip index 5 is out of range"):
        _annotate([5])
    with pytest.raises(errors.AnnotateError):
        _annotate([0], labels=("a", "a"))


def _bank():
    return np.full(800, 0.1, np.float32), np.array([0, 800], np.uint64)


def _render(paths, **over):
    audio, offsets = _bank()
    cols = dict(
        ev_clip=np.array([0, 1], np.uint32), ev_atom=np.zeros(2, np.uint32), ev_onset=np.zeros(2, np.int64),
        ev_length=np.full(2, 800, np.int64), ev_gain_db=np.zeros(2, np.float32), clip_lengths=np.full(2, 1600, np.int64),
    )
    cols.update(over)
    lengths = cols.pop("clip_lengths")
    corpus = _core.Corpus(_core.AudioBank(audio, offsets), _core.EventTable(clip_length=lengths, **cols))
    return _core.render_corpus(corpus, [str(p) for p in paths], _core.Mixer(8000))


def test_mix_errors_by_kind(tmp_path: Path) -> None:
    paths = [tmp_path / "a.wav", tmp_path / "b.wav"]
    with pytest.raises(errors.MixError, match="different lengths"):
        _render(paths, ev_atom=np.zeros(1, np.uint32))
    with pytest.raises(errors.MixError, match="atom index 4 is out of range"):
        _render(paths, ev_atom=np.array([0, 4], np.uint32))
    with pytest.raises(errors.ColumnTypeError, match="ev_onset must be a 1-D numpy array of int64, got a 1-D array of int32"):
        _render(paths, ev_onset=np.zeros(2, np.int32))
    with pytest.raises(errors.MixError, match="must be a contiguous array"):
        _render(paths, ev_onset=np.zeros(4, np.int64)[::2])
    assert not list(tmp_path.iterdir())
    missing = tmp_path / "no" / "such" / "dir"
    with pytest.raises(errors.AudioWriteError, match=r"clip \d: cannot write .*no/such/dir") as write:
        _render([missing / "a.wav", missing / "b.wav"])
    assert isinstance(write.value, OSError)
    _render(paths)
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["a.wav", "b.wav"]
    with pytest.raises(errors.MixError, match="event columns have different lengths"):
        audio, offsets = _bank()
        _core.EventTable(ev_atom=np.zeros(2, np.uint32), ev_onset=np.zeros(1, np.int64), ev_length=np.zeros(2, np.int64),
                         ev_gain_db=np.zeros(2, np.float32), clip_length=np.array([100], np.int64))


def test_resample_and_atom_errors() -> None:
    with pytest.raises(errors.ResampleError, match="sample rates must be positive"):
        _core.resample(np.zeros(10, np.float32), 0, 16000)
    with pytest.raises(errors.AtomError, match="sample_rate must be at least 4000 Hz, got 3000"):
        _core.procedural_atoms(3000)
    with pytest.raises(errors.AtomError, match="NaN or infinite"):
        _core.finish_atom(np.array([0.0, np.nan], np.float32), 8000)
