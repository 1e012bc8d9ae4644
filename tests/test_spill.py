"""Plans held on disk (`reasonaudio.io.spill`): the same plan, tables and fingerprint as in memory,
whatever the block size, and mapped pages that can be given back."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from reasonaudio import _core
from reasonaudio.builder import BuildConfig, plan_build
from reasonaudio.builder.tables import write_benchmark
from reasonaudio.errors import PlanError
from reasonaudio.io import spill
from reasonaudio.io.spill import ArrayFile, release, spill_lists


@settings(max_examples=50, deadline=None)
@given(blocks=st.lists(st.lists(st.integers(0, 2**32 - 1), max_size=50), max_size=8))
def test_an_array_file_reads_back_what_was_appended(blocks):
    f = ArrayFile(np.uint32)
    for b in blocks:
        f.append(np.array(b, dtype=np.uint64))  # converted to the file's dtype
    a = f.array()
    assert a.dtype == np.uint32
    assert a.tolist() == [x for b in blocks for x in b]
    assert not a.flags.writeable or len(a) == 0


@settings(max_examples=50, deadline=None)
@given(lists=st.lists(st.lists(st.integers(0, 1000), max_size=30), max_size=10))
def test_spilled_lists_are_the_lists(lists):
    out = spill_lists(np.array(x, dtype=np.uint32) for x in lists)
    assert [o.tolist() for o in out] == lists
    assert all(o.dtype == np.uint32 for o in out)


def _rss_file_kb() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("RssFile"):
            return int(line.split()[1])
    raise AssertionError("no RssFile in /proc/self/status")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads RssFile from /proc/self/status (Linux)")
def test_release_gives_back_the_pages_read_and_keeps_the_data():
    f = ArrayFile(np.int64)
    for _ in range(8):
        f.append(np.arange(1 << 20, dtype=np.int64))  # 64 MiB in all
    a = f.array()
    release(a)
    before = _rss_file_kb()
    assert int(a.sum()) == 8 * ((1 << 20) * ((1 << 20) - 1) // 2)
    read = _rss_file_kb()
    assert read - before > 48 * 1024  # the pages read are resident
    release({"cols": [a[10:20]]})  # a view, in a list, in a dict: the map it belongs to
    assert read - _rss_file_kb() > 48 * 1024
    assert int(a[-1]) == (1 << 20) - 1  # read again from the file
    release(np.arange(3), [np.zeros(2)])  # arrays in memory: nothing to do


def test_plan_corpus_by_ranges_is_the_whole_plan():
    natives = np.arange(4000, 4000 + 12 * 2500, 2500, dtype=np.int64)  # 12 atoms of 0.25 s to 2 s
    params = _core.plan_params_default()
    n = 1000
    whole = _core.plan_corpus(natives, n, 0.4, 7, params, 1)
    parts = [_core.plan_corpus(natives, n, 0.4, 7, params, 2, lo, min(lo + 333, n)) for lo in range(0, n, 333)]
    assert np.array_equal(np.concatenate([p["clip_length"] for p in parts]), whole["clip_length"])
    assert np.array_equal(np.concatenate([p["clip_overlap"] for p in parts]), whole["clip_overlap"])
    events = 0
    for lo, p in zip(range(0, n, 333), parts):
        assert p["clip_event_ptr"][0] == 0
        assert np.array_equal(p["clip_event_ptr"] + events, whole["clip_event_ptr"][lo : lo + len(p["clip_length"]) + 1])
        e1 = events + int(p["clip_event_ptr"][-1])
        assert np.array_equal(p["ev_clip"] + lo, whole["ev_clip"][events:e1])
        for k in ("ev_atom", "ev_onset", "ev_length", "ev_gain_db", "ev_mode"):
            assert np.array_equal(p[k], whole[k][events:e1])
        events = e1
    for bad in ((5, 3), (0, n + 1)):
        with pytest.raises(PlanError, match="not within a corpus"):
            _core.plan_corpus(natives, n, 0.4, 7, params, 1, *bad)


def _on_disk(monkeypatch, block: int) -> None:
    monkeypatch.setattr(spill, "SPILL_CLIPS", 0)
    monkeypatch.setattr(spill, "SPILL_BLOCK", block)


def _everything(plan) -> tuple:
    return (
        plan.fingerprint(), [np.asarray(r).tolist() for r in plan.relevant], plan.hard_counts, plan.positives,
        plan.negatives, plan.planned, [s.text for s in plan.specs],
        {k: (str(v.dtype), np.asarray(v).tobytes()) for k, v in plan.final.items()},
    )


@pytest.mark.parametrize(
    "config",
    [
        BuildConfig(clips=300, queries_per_task=20, min_hard_negatives=3, overlap_fraction=0.3, seed=1),
        BuildConfig(clips=1500, queries_per_task=30, min_hard_negatives=1, overlap_fraction=1.0, seed=3),
        BuildConfig(clips=400, queries_per_task=60, min_hard_negatives=5, overlap_fraction=0.5, seed=5),
    ],
    ids=["three-hard", "all-overlap", "many-planned"],
)
def test_a_plan_on_disk_is_the_plan_in_memory(monkeypatch, config):
    in_memory = plan_build(config)
    assert not any(isinstance(v.base, memoryview) for v in in_memory.final.values())
    _on_disk(monkeypatch, 97)  # blocks that split clips of every kind, replaced ones among them
    on_disk = plan_build(config)
    assert all(isinstance(v.base, memoryview) for v in on_disk.final.values() if len(v))
    assert on_disk.planned > 0
    assert _everything(on_disk) == _everything(in_memory)


def test_tables_of_a_plan_on_disk_are_those_of_the_plan_in_memory(monkeypatch, tmp_path: Path):
    config = BuildConfig(clips=800, queries_per_task=15, min_hard_negatives=2, seed=9)
    outs = []
    for where in ("memory", "disk"):
        if where == "disk":
            _on_disk(monkeypatch, 128)
        plan = plan_build(config)
        out = tmp_path / where
        out.mkdir()
        n = plan.n_clips
        write_benchmark(plan, out, np.linspace(0.1, 0.9, n), np.ones(n), audio_sha256=[f"{i:064x}" for i in range(n)])
        outs.append(out)
    files = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file())
    for rel in files:
        assert (outs[0] / rel).read_bytes() == (outs[1] / rel).read_bytes(), rel


def test_a_saved_plan_on_disk_is_the_saved_plan_in_memory(monkeypatch, tmp_path: Path):
    from reasonaudio.builder.shard import load_plan, save_plan

    config = BuildConfig(clips=500, queries_per_task=10, seed=2)
    save_plan(plan_build(config), tmp_path / "memory.npz")
    _on_disk(monkeypatch, 64)
    save_plan(plan_build(config), tmp_path / "disk.npz")
    with np.load(tmp_path / "memory.npz") as a, np.load(tmp_path / "disk.npz") as b:
        assert sorted(a.files) == sorted(b.files)
        for key in a.files:
            assert a[key].dtype == b[key].dtype and np.array_equal(a[key], b[key]), key
    loaded = load_plan(tmp_path / "disk.npz", config)
    assert _everything(loaded)[1:] == _everything(plan_build(config))[1:]


@settings(max_examples=40, deadline=None)
@given(
    arrays=st.dictionaries(
        st.sampled_from(["meta", "final_ev_atom", "relevant_clips", "x"]),
        st.tuples(st.sampled_from(["<u4", "<i8", "<f4", "|u1", "<u8"]), st.integers(0, 300)),
        max_size=4,
    ),
    chunk=st.sampled_from([1, 7, 64, 1 << 24]),
)
def test_write_npz_writes_the_members_np_savez_writes(arrays, chunk):
    import io
    import zipfile

    from reasonaudio.io.npz import write_npz

    rng = np.random.default_rng(0)
    values = {k: rng.integers(0, 200, n).astype(dt) for k, (dt, n) in arrays.items()}
    ours, theirs = io.BytesIO(), io.BytesIO()
    write_npz(ours, values, chunk=chunk)
    np.savez(theirs, **values)
    with zipfile.ZipFile(ours) as a, zipfile.ZipFile(theirs) as b:
        assert a.namelist() == b.namelist()
        for name in a.namelist():
            assert a.read(name) == b.read(name), name


@settings(max_examples=100, deadline=None)
@given(lengths=st.lists(st.integers(0, 480_000), min_size=1, max_size=400), sr=st.sampled_from([8000, 16000, 44100]))
def test_duration_stats_on_disk_are_summary_stats(lengths, sr):
    from reasonaudio.builder.tables import _duration_stats, _durations
    from reasonaudio.contract.reference import summary_stats

    clip_length = np.array(lengths, dtype=np.int64)
    expected = summary_stats(clip_length / sr)
    durations = _durations(clip_length, sr, on_disk=True)
    assert isinstance(durations.base, memoryview)
    assert _duration_stats(durations, clip_length, sr, on_disk=True) == expected
