"""Sharded builds and merge: byte-identical to the plain build (contract §3.4), on local paths and
fsspec URIs; refusals leave nothing behind."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from reasonaudio.builder import BuildConfig, build, parse_shard, shard_range
from reasonaudio.cli import main
from reasonaudio.errors import UserError
from reasonaudio.builder.shard import merge


@pytest.fixture(scope="module")
def plain(shardfixture, tmp_path_factory) -> tuple[Path, dict[str, str]]:
    out = tmp_path_factory.mktemp("plain") / "bench"
    build(out, BuildConfig(**shardfixture.SMALL), progress=False)
    return out, shardfixture.tree_digest(out)


@pytest.fixture(scope="module")
def shards(shardfixture, tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("shards")
    dirs = []
    for k in range(3):
        d = root / f"s{k}"
        build(d, BuildConfig(**shardfixture.SMALL), shard=(k, 3), progress=False)
        dirs.append(d)
    return dirs


def test_shard_ranges_cover_the_corpus_once() -> None:
    for n, n_shards in ((300, 3), (301, 4), (5, 5), (7, 1)):
        ranges = [shard_range(n, k, n_shards) for k in range(n_shards)]
        assert ranges[0][0] == 0 and ranges[-1][1] == n
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
        assert max(hi - lo for lo, hi in ranges) - min(hi - lo for lo, hi in ranges) <= 1
    assert parse_shard("2/4") == (2, 4)
    for bad in ("4/4", "-1/2", "1", "a/b", "0/0"):
        with pytest.raises(UserError, match="--shard must be K/N"):
            parse_shard(bad)


def test_shard_holds_its_range_only(shards: list[Path]) -> None:
    meta = json.loads((shards[1] / "shard.json").read_text())
    lo, hi = meta["clip_range"]
    assert (meta["shard"], meta["shards"], lo, hi) == (1, 3, 100, 200)
    names = sorted(p.name for p in (shards[1] / "audio").iterdir())
    assert names == [f"clip_{i:06d}.wav" for i in range(lo, hi)]
    assert not (shards[1] / "clips.parquet").exists()


def test_merged_shards_are_byte_identical(shardfixture, plain, shards, tmp_path: Path) -> None:
    out = tmp_path / "merged"
    merge([str(s) for s in reversed(shards)], out, progress=False)  # any order
    assert shardfixture.tree_digest(out) == plain[1]
    assert shardfixture.leftovers(tmp_path, "merged") == []


def test_merge_cli_and_refusals(shardfixture, plain, shards, tmp_path: Path, capsys) -> None:
    out = tmp_path / "m"
    assert main(["merge", *map(str, shards), "--out", str(out), "--quiet"]) == 0
    assert shardfixture.tree_digest(out) == plain[1]
    # missing shard, duplicate shard, not a shard, non-empty output: one line, exit 2, nothing written
    cases = [
        ([str(shards[0]), str(shards[2])], "missing shard(s) 1/3"),
        ([str(shards[0]), str(shards[0]), str(shards[1]), str(shards[2])], "is also"),
        ([str(plain[0])], "not a finished shard"),
    ]
    for args, message in cases:
        capsys.readouterr()
        assert main(["merge", *args, "--out", str(tmp_path / "x"), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1
        assert not (tmp_path / "x").exists() and shardfixture.leftovers(tmp_path, "x") == []
    assert main(["merge", *map(str, shards), "--out", str(out), "--quiet"]) == 2
    assert "holds an earlier benchmark; pass --force" in capsys.readouterr().err


def test_merge_refuses_shards_of_another_build(shardfixture, shards, tmp_path: Path) -> None:
    other = tmp_path / "other"
    build(other, BuildConfig(**{**shardfixture.SMALL, "seed": shardfixture.SMALL["seed"] + 1}), shard=(1, 3), progress=False)
    with pytest.raises(UserError, match="shard of a different build"):
        merge([str(shards[0]), str(other), str(shards[2])], tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


def test_merge_missing_audio_leaves_nothing(shardfixture, shards, tmp_path: Path) -> None:
    broken = tmp_path / "s1"
    shutil.copytree(shards[1], broken)
    (broken / "audio" / "clip_000150.wav").unlink()
    with pytest.raises(UserError, match="audio file missing"):
        merge([str(shards[0]), str(broken), str(shards[2])], tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists() and shardfixture.leftovers(tmp_path, "out") == []


def test_shard_cli(shardfixture, tmp_path: Path, capsys) -> None:
    out = tmp_path / "s"
    args = ["build", "--out", str(out), "--clips", "300", "--queries-per-task", "5", "--seed", str(shardfixture.SMALL["seed"]), "--quiet"]
    assert main([*args, "--shard", "3/3"]) == 2
    assert "--shard must be K/N" in capsys.readouterr().err and not out.exists()
    assert main([*args, "--shard", "2/3", "--ray", "local"]) == 2
    assert "choose one" in capsys.readouterr().err
    assert main([*args, "--shard", "2/3"]) == 0
    assert "built shard 2/3" in capsys.readouterr().out
    assert json.loads((out / "shard.json").read_text())["clip_range"] == [200, 300]


def test_shards_from_a_saved_plan(shardfixture, plain, tmp_path: Path, capsys) -> None:
    args = ["--clips", "300", "--queries-per-task", "5", "--seed", str(shardfixture.SMALL["seed"]), "--quiet"]
    plan = tmp_path / "plan.npz"
    assert main(["build", *args, "--save-plan", str(plan)]) == 0
    dirs = []
    for k in range(2):
        dirs.append(str(tmp_path / f"s{k}"))
        assert main(["build", "--out", dirs[-1], *args, "--shard", f"{k}/2", "--from-plan", str(plan)]) == 0
    assert main(["merge", *dirs, "--out", str(tmp_path / "m"), "--from-plan", str(plan), "--quiet"]) == 0
    assert shardfixture.tree_digest(tmp_path / "m") == plain[1]
    capsys.readouterr()
    # a plan made with other options is refused, naming the difference; so is a file that is no plan
    assert main(["build", "--out", str(tmp_path / "x"), *args, "--clips", "301", "--shard", "0/2", "--from-plan", str(plan)]) == 2
    assert "planned with other build parameters: clips=300 (here 301)" in capsys.readouterr().err
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    assert main(["build", "--out", str(tmp_path / "x"), *args, "--from-plan", str(tmp_path / "junk.npz")]) == 2
    assert "not a reasonaudio plan file" in capsys.readouterr().err
    assert main(["build", *args, "--save-plan", str(plan), "--shard", "0/2"]) == 2
    assert not (tmp_path / "x").exists()


def test_more_shards_than_clips(shardfixture, tmp_path: Path) -> None:
    small = {**shardfixture.SMALL, "clips": 2, "queries_per_task": 0}
    build(tmp_path / "plain", BuildConfig(**small), progress=False)
    dirs = []
    for k in range(3):  # 3 shards of 2 clips: one shard is empty
        dirs.append(str(tmp_path / f"s{k}"))
        build(dirs[-1], BuildConfig(**small), shard=(k, 3), progress=False)
    assert json.loads((tmp_path / "s0" / "shard.json").read_text())["clip_range"] == [0, 0]
    merge(dirs, tmp_path / "m", progress=False)
    assert shardfixture.tree_digest(tmp_path / "m") == shardfixture.tree_digest(tmp_path / "plain")


def test_memory_uri_build_and_merge(shardfixture, plain, shards, tmp_path: Path) -> None:
    fsspec = pytest.importorskip("fsspec")
    mem = fsspec.filesystem("memory")
    build("memory://ra-test/bench", BuildConfig(**shardfixture.SMALL), progress=False)
    assert shardfixture.tree_digest("memory://ra-test/bench") == plain[1]
    assert [p["name"] for p in mem.ls("/ra-test")] == ["/ra-test/bench"]  # staging prefix gone
    with pytest.raises(UserError, match="holds an earlier benchmark; pass --force"):
        build("memory://ra-test/bench", BuildConfig(**shardfixture.SMALL), progress=False)
    # shards on one filesystem, merged onto another
    for k in (0, 2):
        build(f"memory://ra-test/s{k}", BuildConfig(**shardfixture.SMALL), shard=(k, 3), progress=False)
    merge(["memory://ra-test/s0", str(shards[1]), "memory://ra-test/s2"], tmp_path / "m", progress=False)
    assert shardfixture.tree_digest(tmp_path / "m") == plain[1]
    merge([str(s) for s in shards], "memory://ra-test/merged", progress=False)
    assert shardfixture.tree_digest("memory://ra-test/merged") == plain[1]
    mem.rm("/ra-test", recursive=True)


def test_s3_build_with_a_local_server(shardfixture, tmp_path: Path) -> None:
    pytest.importorskip("s3fs", reason="s3fs not installed")
    pytest.importorskip("moto.server", reason="moto[server] not installed (the in-process S3 fake)")
    shardfixture.quiet_s3_logs()
    small = {**shardfixture.SMALL, "clips": 120, "queries_per_task": 2}
    build(tmp_path / "plain", BuildConfig(**small), progress=False)
    with shardfixture.s3_server():
        build("s3://bench/b", BuildConfig(**small), progress=False)
        assert shardfixture.tree_digest("s3://bench/b") == shardfixture.tree_digest(tmp_path / "plain")
        import s3fs

        assert s3fs.S3FileSystem().ls("bench") == ["bench/b"]


SCENE = {"background": "noise:pink", "snr_db": [5.0, 15.0], "room": "simulated:0.3,0.4", "pitch_semitones": [-2.0, 2.0]}


def test_a_scene_build_shards_merges_and_loads_its_plan_to_the_same_bytes(shardfixture, tmp_path: Path) -> None:
    """Contract §3.4 with §5: a bed at drawn SNRs, rooms and pitch, rendered whole, in 2 shards and from a
    saved plan, is one benchmark byte for byte (the draws depend on (seed, clip) alone)."""
    pytest.importorskip("pyroomacoustics", reason="simulated rooms need the scene extra")
    from reasonaudio.builder import plan_build
    from reasonaudio.builder.shard import load_plan, save_plan

    config = BuildConfig(clips=60, queries_per_task=3, seed=4, scene=SCENE)
    plain = shardfixture.tree_digest(build(tmp_path / "plain", config, progress=False))
    assert any(k.endswith("scene_events.parquet") for k in plain) and any("/rooms/" in k or k.startswith("rooms/") for k in plain)
    dirs = [tmp_path / f"s{k}" for k in range(2)]
    for k, d in enumerate(dirs):
        build(d, config, shard=(k, 2), progress=False)
    assert (dirs[1] / "render_events.parquet").is_file()
    merge([str(d) for d in dirs], tmp_path / "merged", progress=False)
    assert shardfixture.tree_digest(tmp_path / "merged") == plain
    plan_file = save_plan(plan_build(config), tmp_path / "plan.npz")
    assert load_plan(plan_file, config).scene is not None
    assert shardfixture.tree_digest(build(tmp_path / "from_plan", config, from_plan=plan_file, progress=False)) == plain
    assert shardfixture.tree_digest(build(f"file://{tmp_path}/uri", config, progress=False)) == plain
    # a shard whose per-event SNRs are gone is named, not merged into a benchmark without them
    (dirs[0] / "render_events.parquet").unlink()
    with pytest.raises(UserError, match="render_events.parquet: missing"):
        merge([str(d) for d in dirs], tmp_path / "broken", progress=False)
    assert not (tmp_path / "broken").exists()


def _rewrite_plan(src: Path, dst: Path, edit) -> None:
    """`src`'s arrays, `edit(arrays)` applied, written as np.savez writes a plan."""
    with np.load(src, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    edit(arrays)
    np.savez(dst, **arrays)


def test_a_loaded_plan_maps_its_file_and_checks_it(shardfixture, tmp_path: Path) -> None:
    """A plan file's columns are memory maps of it, equal to the plan saved; a damaged column is
    found by the fingerprint, damaged relevance by its CRC; a plan of format 1 (every clip id in
    its header) loads to the same plan."""
    from reasonaudio.builder import plan_build
    from reasonaudio.builder.shard import load_plan, save_plan

    config = BuildConfig(**shardfixture.SMALL)
    plan = plan_build(config)
    path = save_plan(plan, tmp_path / "plan.npz")
    loaded = load_plan(path, config)
    assert loaded.fingerprint() == plan.fingerprint() and loaded.known_fingerprint == plan.fingerprint()
    assert all(isinstance(v, np.memmap) for v in loaded.final.values() if v.size)
    for key, column in plan.final.items():
        np.testing.assert_array_equal(loaded.final[key], column)
    assert [r.tolist() for r in loaded.relevant] == [np.asarray(r).tolist() for r in plan.relevant]

    def old_format(arrays) -> None:
        meta = json.loads(bytes(arrays["meta"]).decode())
        meta["format"] = "reasonaudio-plan/1"
        meta["clip_ids"] = list(plan.clip_ids)
        del meta["n_clips"]
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)

    _rewrite_plan(path, tmp_path / "v1.npz", old_format)
    assert load_plan(tmp_path / "v1.npz", config).fingerprint() == plan.fingerprint()

    def bump(key: str):
        def edit(arrays) -> None:
            arrays[key] = arrays[key].copy()
            arrays[key][len(arrays[key]) // 2] += 1
        return edit

    _rewrite_plan(path, tmp_path / "col.npz", bump("final_ev_onset"))
    with pytest.raises(UserError, match="differ from the ones that made this plan"):
        load_plan(tmp_path / "col.npz", config)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("relevant_clips.npy")
    data[info.header_offset + 30 + len(info.filename) + 200] ^= 0xFF
    (tmp_path / "rel.npz").write_bytes(bytes(data))
    with pytest.raises(UserError, match="not a reasonaudio plan file .*CRC"):
        load_plan(tmp_path / "rel.npz", config)
