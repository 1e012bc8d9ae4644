"""`merge --audio-elsewhere`: the tables, manifest and audio.sha256 of a sharded build without its
audio at hand (each shard exported and its audio deleted), byte for byte those of a merge with it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reasonaudio.cli import main

ARGS = ["--clips", "300", "--queries-per-task", "5", "--seed", "3", "--quiet"]


@pytest.fixture(scope="module")
def planned(tmp_path_factory) -> tuple[Path, list[Path]]:
    """A plan saved once and its two shards."""
    root = tmp_path_factory.mktemp("elsewhere")
    plan = root / "plan.npz"
    assert main(["build", *ARGS, "--save-plan", str(plan)]) == 0
    shards = [root / f"s{k}" for k in range(2)]
    for k, d in enumerate(shards):
        assert main(["build", "--out", str(d), *ARGS, "--shard", f"{k}/2", "--from-plan", str(plan)]) == 0
    return plan, shards


def _without_audio(digests: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in digests.items() if not k.startswith("audio/")}


def test_tables_manifest_and_hashes_equal_a_full_merge(shardfixture, planned, tmp_path: Path, capsys) -> None:
    plan, shards = planned
    full, bare = tmp_path / "full", tmp_path / "bare"
    assert main(["merge", *map(str, shards), "--out", str(full), "--from-plan", str(plan), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["merge", *map(str, shards), "--out", str(bare), "--from-plan", str(plan), "--audio-elsewhere", "--quiet"]) == 0
    assert "no audio copied" in capsys.readouterr().out
    full_digest, bare_digest = shardfixture.tree_digest(full), shardfixture.tree_digest(bare)
    assert sum(k.startswith("audio/") for k in full_digest) == 300
    assert _without_audio(full_digest) == bare_digest  # every table, manifest.json, audio.sha256, BEIR file
    assert {"manifest.json", "audio.sha256", "clips.parquet", "qrels.parquet"} <= set(bare_digest)
    assert (bare / "audio").is_dir() and not any((bare / "audio").iterdir())
    assert main(["validate", str(bare), "--no-audio", "-q"]) == 0
    # the full merge's audio is what the hash list written without it names
    assert main(["validate", str(full), "-q"]) == 0


def test_shards_whose_audio_is_deleted(shardfixture, planned, tmp_path: Path) -> None:
    plan, shards = planned
    gone = []
    for s in shards:
        copy = tmp_path / s.name
        shutil.copytree(s, copy)
        shutil.rmtree(copy / "audio")
        gone.append(str(copy))
    assert main(["merge", *gone, "--out", str(tmp_path / "a"), "--audio-elsewhere", "--quiet"]) == 0  # re-planned
    assert main(["merge", *gone, "--out", str(tmp_path / "b"), "--from-plan", str(plan), "--audio-elsewhere", "--quiet"]) == 0
    assert shardfixture.tree_digest(tmp_path / "a") == shardfixture.tree_digest(tmp_path / "b")
    # without the flag the missing audio is refused
    assert main(["merge", *gone, "--out", str(tmp_path / "c"), "--from-plan", str(plan), "--quiet"]) == 2
    assert not (tmp_path / "c").exists()


def test_hash_lists_that_do_not_cover_the_shard_are_refused(shardfixture, planned, tmp_path: Path, capsys) -> None:
    plan, shards = planned

    def broken(name: str, edit) -> Path:
        copy = tmp_path / name
        shutil.copytree(shards[1], copy)
        edit(copy / "audio.sha256")
        return copy

    first_of_s0 = (shards[0] / "audio.sha256").read_text().splitlines(keepends=True)[0]
    cases = [
        (broken("none", Path.unlink), "audio.sha256: missing"),
        # another shard's list: none of this shard's clips
        (broken("other", lambda p: shutil.copyfile(shards[0] / "audio.sha256", p)), "audio.sha256: does not list audio/clip_000150"),
        # this shard's list less a line
        (broken("short", lambda p: p.write_text("".join(p.read_text().splitlines(keepends=True)[1:]))), "does not list audio/clip_000150"),
        # this shard's list plus a clip of the other shard
        (broken("extra", lambda p: p.write_text(first_of_s0 + p.read_text())), "lists audio/clip_000000"),
        (broken("junk", lambda p: p.write_text("not a hash line\n")), "expected '<sha256>  audio/<file>'"),
    ]
    for shard, message in cases:
        out = tmp_path / f"out-{shard.name}"
        capsys.readouterr()
        assert main(["merge", str(shards[0]), str(shard), "--out", str(out), "--from-plan", str(plan),
                     "--audio-elsewhere", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert message in err and str(shard) in err and err.count("\n") == 1, err
        assert not out.exists() and shardfixture.leftovers(tmp_path, out.name) == []


def test_shards_on_a_uri_merge_without_their_audio(shardfixture, planned, tmp_path: Path) -> None:
    fsspec = pytest.importorskip("fsspec")
    from reasonaudio.builder import BuildConfig, build
    from reasonaudio.builder.shard import merge

    plan, shards = planned
    mem = fsspec.filesystem("memory")
    config = BuildConfig(clips=300, queries_per_task=5, seed=3)
    try:
        build("memory://ra-elsewhere/s1", config, shard=(1, 2), progress=False, from_plan=plan)
        mem.rm("/ra-elsewhere/s1/audio", recursive=True)
        merge([str(shards[0]), "memory://ra-elsewhere/s1"], tmp_path / "m", from_plan=plan, copy_audio=False, progress=False)
        merge([str(s) for s in shards], tmp_path / "local", from_plan=plan, copy_audio=False, progress=False)
        assert shardfixture.tree_digest(tmp_path / "m") == shardfixture.tree_digest(tmp_path / "local")
    finally:
        mem.rm("/ra-elsewhere", recursive=True)
