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


# ------------------------------------------------------------------ exporting the whole, audio elsewhere


@pytest.fixture(scope="module")
def merged(planned, tmp_path_factory) -> tuple[Path, Path, Path]:
    """The full merge, the merge without audio, and a folder holding the shards' audio elsewhere."""
    plan, shards = planned
    root = tmp_path_factory.mktemp("merged")
    full, bare, elsewhere = root / "full", root / "bare", root / "store"
    assert main(["merge", *map(str, shards), "--out", str(full), "--from-plan", str(plan), "--quiet"]) == 0
    assert main(["merge", *map(str, shards), "--out", str(bare), "--from-plan", str(plan), "--audio-elsewhere", "--quiet"]) == 0
    for s in shards:
        shutil.copytree(s / "audio", elsewhere / "audio", dirs_exist_ok=True)
    return full, bare, elsewhere


SHARD_MB = "20"  # several corpus shards of 300 clips


def test_export_reads_the_audio_where_it_is(shardfixture, merged, tmp_path: Path, capsys) -> None:
    full, bare, elsewhere = merged
    assert main(["export", str(full), "--out", str(tmp_path / "a"), "--name", "big", "--shard-mb", SHARD_MB]) == 0
    assert main(["export", str(bare), "--out", str(tmp_path / "b"), "--name", "big", "--shard-mb", SHARD_MB,
                 "--audio-from", str(elsewhere)]) == 0
    a, b = shardfixture.tree_digest(tmp_path / "a"), shardfixture.tree_digest(tmp_path / "b")
    assert sum(k.startswith("corpus/") for k in a) > 2
    assert a == b
    # without --audio-from the empty audio folder is named, with the way out
    capsys.readouterr()
    assert main(["export", str(bare), "--out", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert "clip_000000" in err and "--audio-from" in err and err.count("\n") == 1, err
    assert not (tmp_path / "c").exists()


def test_export_to_a_uri_holds_one_corpus_shard_at_a_time(shardfixture, merged, tmp_path: Path, monkeypatch) -> None:
    fsspec = pytest.importorskip("fsspec")
    from fsspec.implementations.memory import MemoryFileSystem

    from reasonaudio.io.export import export_hf

    full, bare, elsewhere = merged
    export_hf(full, tmp_path / "local", name="big", shard_bytes=20 * 2**20)
    held: list[int] = []
    put_file = MemoryFileSystem.put_file

    def counting(self, lpath, rpath, *args, **kwargs):
        if str(rpath).rpartition("/")[0].endswith("/corpus"):  # a corpus shard, staged beside no other
            held.append(sum(1 for p in Path(lpath).parent.iterdir() if p.suffix == ".parquet"))
        return put_file(self, lpath, rpath, *args, **kwargs)

    monkeypatch.setattr(MemoryFileSystem, "put_file", counting)
    mem = fsspec.filesystem("memory")
    try:
        summary = export_hf(bare, "memory://ra-export/big", name="big", shard_bytes=20 * 2**20,
                            audio_from=f"file://{elsewhere}")
        assert held and max(held) == 1 and len(held) == summary["corpus_shards"]
        assert shardfixture.tree_digest("memory://ra-export/big") == shardfixture.tree_digest(tmp_path / "local")
        assert [p for p in mem.ls("/ra-export", detail=False) if "tmp" in p] == []
    finally:
        if mem.exists("/ra-export"):
            mem.rm("/ra-export", recursive=True)


def test_export_refuses_a_changed_or_missing_clip_elsewhere(shardfixture, merged, tmp_path: Path, capsys) -> None:
    fsspec = pytest.importorskip("fsspec")
    from reasonaudio.errors import UserError
    from reasonaudio.io.export import export_hf

    _, bare, elsewhere = merged
    store = tmp_path / "store"
    shutil.copytree(elsewhere, store)
    clip = store / "audio" / "clip_000217.wav"
    data = bytearray(clip.read_bytes())
    data[-1] ^= 1
    clip.write_bytes(bytes(data))
    mem = fsspec.filesystem("memory")
    with pytest.raises(UserError, match=r"clip_000217\.wav: sha256 differs"):
        export_hf(bare, "memory://ra-refused/big", audio_from=str(store))
    assert not mem.exists("/ra-refused/big") and not [p for p in mem.find("/ra-refused") if "tmp" in p]
    clip.unlink()
    capsys.readouterr()
    assert main(["export", str(bare), "--out", str(tmp_path / "out"), "--audio-from", str(store)]) == 2
    err = capsys.readouterr().err
    assert "clip_000217.wav: audio file of clip 'clip_000217' not found (--audio-from)" in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists() and shardfixture.leftovers(tmp_path, "out") == []
    assert main(["export", str(bare), "--out", "memory://ra-refused/x", "--audio-from", str(store)]) == 2
    assert "memory://" in capsys.readouterr().err


@pytest.mark.parametrize("elsewhere", [True, False], ids=["audio-elsewhere", "with-audio"])
def test_a_merge_holding_its_statistics_on_disk_writes_the_same_bytes(shardfixture, planned, tmp_path: Path, monkeypatch, elsewhere) -> None:
    from reasonaudio.io import spill

    plan, shards = planned
    flag = ["--audio-elsewhere"] if elsewhere else []
    assert main(["merge", *map(str, shards), "--out", str(tmp_path / "memory"), "--from-plan", str(plan), *flag, "--quiet"]) == 0
    monkeypatch.setattr(spill, "SPILL_CLIPS", 0)  # render statistics and digests held in temporary files
    monkeypatch.setattr(spill, "SPILL_BLOCK", 64)
    assert main(["merge", *map(str, shards), "--out", str(tmp_path / "disk"), "--from-plan", str(plan), *flag, "--quiet"]) == 0
    assert shardfixture.tree_digest(tmp_path / "memory") == shardfixture.tree_digest(tmp_path / "disk")
