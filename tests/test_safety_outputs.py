"""Outputs: every file and folder any command writes follows one discipline
(`reasonaudio.io.outputs`). One table of cases, each an exact command line and the class of what
must happen; the victim of each case (a user's file, an input, an earlier output) is checked
byte for byte afterwards.

Classes:
  unmarked   --force onto a folder that merely holds a commonly named file: refused, names how to
             remove it by hand, nothing touched (only the tool's marker makes a folder replaceable)
  input      a single-file output that is or lies inside an input: refused
  foreign    a single-file output over a file that is not this kind's earlier output: refused even
             with --force
  earlier    an earlier output of the same kind: refused without --force, replaced with it
  distinct   two outputs of one command on one path: refused before any work
  upfront    an output that cannot work (memory://) refused before any work
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from reasonaudio.cli import main

SMALL = ["--clips", "60", "--queries-per-task", "2", "--max-clip-s", "8", "--quiet"]
TINY = ["--clips", "12", "--queries-per-task", "0", "--max-clip-s", "8", "--quiet"]  # a corpus only: plans in a blink


def _cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reasonaudio", *args], capture_output=True, text=True, **kwargs)


def _tree(root: Path) -> dict[str, str]:
    """Every file under `root` (or `root` itself) with its sha256: what must not change."""
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Path]:
    """One small benchmark, an atom library, an eval run and a foreign PNG, built once."""
    root = tmp_path_factory.mktemp("safety")
    bench = root / "b"
    assert main(["build", "--out", str(bench), *SMALL]) == 0
    src = root / "src"
    for k, label in enumerate(("dog", "bell")):
        (src / label).mkdir(parents=True)
        for j in range(2):
            shutil.copy(bench / "audio" / f"clip_{2 * k + j:06d}.wav", src / label / f"{j}.wav")
    lib = root / "lib"
    assert main(["atoms", "import", str(src), "--out", str(lib), "--min-s", "0.1"]) == 0
    run = root / "run"
    assert main(["eval", str(bench), "--model", "random", "--out", str(run), "--quiet", "--no-figures", "--bootstrap", "10"]) == 0
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(1, 1))
    fig.savefig(root / "keep.png")  # a PNG that is not ours
    plt.close(fig)
    return {"root": root, "bench": bench, "lib": lib, "run": run, "src": src}


def _setup_unmarked(where: Path, name: str) -> Path:
    where.mkdir()
    (where / name).write_text("{}\n")
    (where / "index.html").write_text("my page\n")
    return where


# (id, argv with {placeholders}, setup -> victim path, class, text the refusal must contain)
CASES = [
    ("build-force-manifest", "build --out {w} --force " + " ".join(SMALL), ("dir", "manifest.json"), "unmarked", "rm -r"),
    ("eval-force-results", "eval {bench} --model random --out {w} --force --quiet --no-figures", ("dir", "results.json"), "unmarked", "rm -r"),
    ("atoms-import-force", "atoms import {src} --out {w} --force", ("dir", "atoms.parquet"), "unmarked", "rm -r"),
    ("report-force-comparison", "report {run} --out {w} --force", ("dir", "comparison.json"), "unmarked", "rm -r"),
    ("audit-force-cards", "audit {bench} --out {w} --force", ("dir", "cards.js"), "unmarked", "rm -r"),
    ("compose-build-force", "compose build --out {w} --cue environment --task math --n 4 --force", ("dir", "manifest.json"), "unmarked", "rm -r"),
    ("compose-score-force", "compose score {bench} --outputs {root}/o.jsonl --out {w} --force", ("dir", "results.json"), "unmarked", "rm -r"),
    ("save-plan-notes", "build --save-plan {w} " + " ".join(SMALL), ("file", "notes.txt"), "foreign", "not a reasonaudio build plan"),
    ("save-plan-notes-force", "build --save-plan {w} --force " + " ".join(SMALL), ("file", "notes.txt"), "foreign", "not a reasonaudio build plan"),
    ("save-plan-into-library", "build --atoms {lib} --save-plan {lib}/atoms.parquet --force " + " ".join(SMALL), ("input", "lib"), "input", "lies inside the input"),
    ("validate-json-manifest", "validate {bench} --json {bench}/manifest.json --quiet --force", ("input", "bench"), "input", "lies inside the input"),
    ("inspect-png-wav", "inspect {bench} clip_000001 --png {bench}/audio/clip_000001.wav --force", ("input", "bench"), "input", "lies inside the input"),
    ("inspect-png-manifest", "inspect {bench} clip_000001 --png {bench}/manifest.json", ("input", "bench"), "input", "lies inside the input"),
    ("inspect-png-foreign", "inspect {bench} clip_000001 --png {root}/keep.png --force", ("keep", "keep.png"), "foreign", "not a reasonaudio inspect figure"),
    ("atoms-show-foreign", "atoms show {lib} --out {root}/keep.png --force", ("keep", "keep.png"), "foreign", "not a reasonaudio contact sheet"),
    ("atoms-show-into-library", "atoms show {lib} --out {lib}/atoms.parquet --force", ("input", "lib"), "input", "lies inside the input"),
    ("detect-train-into-library", "detect train {lib} --out {lib}/atoms.parquet --force", ("input", "lib"), "input", "lies inside the input"),
    ("detect-train-foreign", "detect train {lib} --out {w} --force", ("file", "notes.txt"), "foreign", "not a reasonaudio detector model"),
    ("audit-score-foreign", "audit score {root}/j.json --bench {bench} --out {w} --force", ("scoredir", "score.json"), "foreign", "not a reasonaudio audit score"),
    ("annotate-foreign", "annotate --events {bench} --queries {bench} --out {w} --force", ("file", "q.tsv"), "foreign", "not a reasonaudio qrels table"),
    ("detect-run-same-out-metrics", "detect run {root}/model.pt {bench} --out {root}/x.parquet --metrics {root}/x.parquet", ("none", ""), "distinct", "are the same place"),
    ("build-memory", "build --out memory://bench " + " ".join(SMALL), ("none", ""), "upfront", "memory://"),
    ("merge-memory", "merge {root}/s0 --out memory://m", ("none", ""), "upfront", "memory://"),
]


@pytest.mark.parametrize("case, argv, setup, klass, says", CASES, ids=[c[0] for c in CASES])
def test_refusals(world, tmp_path: Path, capsys, case, argv, setup, klass, says) -> None:
    what, name = setup
    w = tmp_path / "w"
    if what == "dir":
        victim = _setup_unmarked(w, name)
    elif what == "file":
        w = tmp_path / name
        w.write_text("my own notes\n")
        victim = w
    elif what == "scoredir":
        w.mkdir()
        (w / name).write_text(json.dumps({"mine": 1}))
        victim = w
    elif what == "keep":
        victim = world["root"] / name
    elif what == "input":
        victim = world[name]
    else:
        victim = None
    before = _tree(victim) if victim is not None else {}
    stage_before = set(Path(tempfile.gettempdir()).glob("reasonaudio-stage-*"))
    args = argv.format(w=w, **{k: str(v) for k, v in world.items()}).split()
    started = time.perf_counter()
    assert main(args) == 2, case
    err = capsys.readouterr().err
    assert says in err, err
    assert len(err.strip().splitlines()) == 1 or all("note:" in line for line in err.strip().splitlines()[:-1]), err
    assert "Traceback" not in err
    if victim is not None:
        assert _tree(victim) == before, f"{case}: {victim} changed"
        assert not list(victim.parent.glob(f".{victim.name}.*")), "a lock or temporary was left"
    if klass in ("distinct", "upfront"):
        assert time.perf_counter() - started < 20  # refused before the work, not after it
        assert set(Path(tempfile.gettempdir()).glob("reasonaudio-stage-*")) <= stage_before
        assert not (world["root"] / "x.parquet").exists()


def test_earlier_outputs_need_force_and_are_then_replaced(world, tmp_path: Path, capsys) -> None:
    bench = str(world["bench"])
    plan, report, png = tmp_path / "p.npz", tmp_path / "v.json", tmp_path / "p.png"
    runs = [
        (["build", "--save-plan", str(plan), *TINY], plan),
        (["validate", bench, "--json", str(report), "--quiet", "--no-audio"], report),
        (["inspect", bench, "clip_000001", "--png", str(png)], png),
    ]
    for argv, written in runs:
        assert main(argv) == 0, argv
        assert main(argv) == 2, argv
        assert "pass --force" in capsys.readouterr().err
        os.utime(written, (0, 0))
        assert main([*argv, "--force"]) == 0, argv
        assert written.stat().st_mtime > 0  # replaced
    assert json.loads(report.read_text())["format"].startswith("reasonaudio-validate-report/")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.npz", "p.png", "v.json"]


def test_audit_score_accepts_force(world, tmp_path: Path, capsys) -> None:
    """--force was refused by `audit score`; now it replaces an earlier score (the fake judgments
    then fail on their own, after the claim)."""
    out = tmp_path / "s"
    out.mkdir()
    (out / "score.json").write_text(json.dumps({"format": "reasonaudio-audit-score/1"}))
    assert main(["audit", "score", str(tmp_path / "missing.json"), "--bench", str(world["bench"]), "--out", str(out)]) == 2
    assert "pass --force" in capsys.readouterr().err
    assert main(["audit", "score", str(tmp_path / "missing.json"), "--bench", str(world["bench"]), "--out", str(out), "--force"]) == 2
    err = capsys.readouterr().err
    assert "does not apply" not in err and "missing.json" in err
    assert json.loads((out / "score.json").read_text()) == {"format": "reasonaudio-audit-score/1"}  # kept: nothing was scored
    assert sorted(p.name for p in out.iterdir()) == ["score.json"]


@pytest.mark.parametrize("scheme", ["", "file://"])
def test_a_held_lock_refuses_a_second_writer_at_once(world, tmp_path: Path, capsys, scheme) -> None:
    out = tmp_path / "fb"
    fd = os.open(tmp_path / ".fb.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        assert main(["build", "--out", f"{scheme}{out}", *SMALL]) == 2
        assert "another reasonaudio command is writing it" in capsys.readouterr().err
    finally:
        os.close(fd)
    assert not out.exists()
    assert main(["build", "--out", f"{scheme}{out}", *SMALL]) == 0
    assert (out / ".reasonaudio-output").is_file()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".fb.lock") == ["fb"]


def test_kill_9_of_a_file_uri_build_is_cleaned_by_the_next_run(tmp_path: Path, capsys) -> None:
    out = tmp_path / "b"
    proc = subprocess.Popen([sys.executable, "-m", "reasonaudio", "build", "--out", f"file://{out}", "--clips", "1500", "--quiet"],
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and not any(tmp_path.glob(".b.tmp-*/audio/*")):
        time.sleep(0.05)
    assert any(tmp_path.glob(".b.tmp-*")), "the build never staged beside its target"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert main(["build", "--out", f"file://{out}", *TINY]) == 0
    err = capsys.readouterr().err
    assert "removed" in err and ".b.tmp-" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]


def test_scratch_of_a_killed_process_is_removed_by_the_next(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    code = ("import os; from reasonaudio.io.outputs import scratch_directory\n"
            "with scratch_directory() as d:\n (d / 'x.wav').write_bytes(b'0' * 1000); os.kill(os.getpid(), 9)\n")
    subprocess.run([sys.executable, "-c", code], env=env)
    assert len(list(tmp_path.glob("reasonaudio-stage-*"))) == 1
    # the note goes to the `reasonaudio` logger; a program shows it by configuring logging, as the CLI does
    code = ("import logging; logging.basicConfig()\nfrom reasonaudio.io.outputs import scratch_directory\n"
            "with scratch_directory() as d: import pathlib; print(sorted(p.name for p in pathlib.Path(d).parent.parent.iterdir()))\n")
    live = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert "removed" in live.stderr, live.stderr
    assert len(json.loads(live.stdout.replace("'", '"'))) == 1  # only the live one, while it lived
    assert not list(tmp_path.glob("reasonaudio-stage-*"))


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["models"]], ids=" ".join)
def test_standard_output_that_cannot_be_written_exits_non_zero(argv) -> None:
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "reasonaudio", *argv], stdout=full, stderr=subprocess.PIPE, text=True)
    assert result.returncode == 2
    assert result.stderr.strip().endswith("standard output: No space left on device"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@contextlib.contextmanager
def _tmpfs(where: Path, options: str):
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip() or 'mount failed'}): the full-disk cases need one")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


FULL_CASES = [
    ("build", "build --out {d}/sub/b " + " ".join(TINY), "{d}/sub/b"),
    ("eval", "eval {bench} --model random --out {d}/r --quiet --no-figures --bootstrap 10", "{d}/r"),
    ("validate-json", "validate {bench} --no-audio --quiet --json {d}/v.json", "{d}/v.json"),
    ("inspect-png", "inspect {bench} clip_000001 --png {d}/p.png", "{d}/p.png"),
    ("save-plan", "build --save-plan {d}/p.npz " + " ".join(TINY), "{d}/p.npz"),
    ("annotate-tsv", "annotate --events {bench} --queries {bench} --out {d}/q.tsv", "{d}/q.tsv"),
    ("annotate-parquet", "annotate --events {bench} --queries {bench} --out {d}/q.parquet", "{d}/q.parquet"),
    ("export", "export {bench} --out {d}/hf", "{d}/hf"),
    ("audit", "audit {bench} --out {d}/site", "{d}/site"),
]


def test_a_full_disk_names_the_output_and_leaves_nothing(world, tmp_path: Path, capsys) -> None:
    with _tmpfs(tmp_path / "full", "size=1m") as d:
        with contextlib.suppress(OSError), open(d / "fill", "wb", buffering=0) as fh:
            while True:  # to the last byte: any later write fails (a lock, a folder need no blocks)
                fh.write(b"\0" * 4096)
        for case, argv, named in FULL_CASES:
            args = argv.format(d=d, bench=world["bench"]).split()
            status = main(args)
            stderr = capsys.readouterr().err
            err = stderr.strip().splitlines()
            assert status == 2, (case, stderr)
            assert err and err[-1].endswith("No space left on device; nothing was written"), (case, stderr)
            assert named.format(d=d) in err[-1], (case, err[-1])
            assert "Traceback" not in stderr
            assert sorted(p.name for p in d.iterdir()) == ["fill"], (case, sorted(p.name for p in d.iterdir()))


def test_a_read_only_folder_is_refused_before_the_work(world, tmp_path: Path, capsys) -> None:
    with _tmpfs(tmp_path / "ro", "size=1m,ro") as d:
        for argv in (["build", "--out", f"{d}/b", *TINY], ["validate", str(world["bench"]), "--no-audio", "--json", f"{d}/v.json"],
                     ["inspect", str(world["bench"]), "clip_000001", "--png", f"{d}/sub/p.png"]):
            assert main(argv) == 2, argv
            out = capsys.readouterr()
            assert str(d) in out.err and "Read-only file system" in out.err, out.err
            assert len(out.err.strip().splitlines()) == 1, out.err  # refused up front: no progress, no notes
            assert out.out == ""


def test_file_kinds_recognise_only_their_own(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from reasonaudio.io.outputs import _file_is, json_kind, npz_kind, png_kind, png_metadata

    sheet, figure = png_kind("contact sheet"), png_kind("inspect figure")
    fig = plt.figure(figsize=(1, 1))
    fig.savefig(tmp_path / "ours.png", metadata=png_metadata(sheet))
    fig.savefig(tmp_path / "plain.png")
    plt.close(fig)
    assert _file_is(tmp_path / "ours.png", sheet)
    assert not _file_is(tmp_path / "ours.png", figure)
    assert not _file_is(tmp_path / "plain.png", sheet)
    report = json_kind("report", "reasonaudio-x/1")
    (tmp_path / "r.json").write_text(json.dumps({"format": "reasonaudio-x/2"}))
    (tmp_path / "other.json").write_text(json.dumps({"format": "something-else/1"}))
    (tmp_path / "list.json").write_text("[1, 2]")
    assert _file_is(tmp_path / "r.json", report)
    assert not _file_is(tmp_path / "other.json", report) and not _file_is(tmp_path / "list.json", report)
    plan = npz_kind("plan", "reasonaudio-plan/1")
    np.savez(tmp_path / "p.npz", meta=np.frombuffer(json.dumps({"format": "reasonaudio-plan/1"}).encode(), np.uint8))
    np.savez(tmp_path / "q.npz", meta=np.zeros(3, np.uint8))
    assert _file_is(tmp_path / "p.npz", plan) and not _file_is(tmp_path / "q.npz", plan)
    (tmp_path / "empty").write_bytes(b"")
    assert _file_is(tmp_path / "empty", plan)  # nothing to lose


def test_a_remote_output_stages_in_locked_scratch_and_always_removes_it(tmp_path: Path, monkeypatch) -> None:
    """memory:// from the API: a location at the filesystem's root works (its paths start with "/"),
    and a build that fails inside the output leaves neither a remote temporary nor local scratch."""
    import fsspec

    from reasonaudio.builder import BuildConfig, build
    from reasonaudio.errors import UserError

    from reasonaudio.io import storage

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    made = []
    real = storage.scratch_directory
    monkeypatch.setattr(storage, "scratch_directory", lambda *a: made.append(a) or real(*a))
    fs = fsspec.filesystem("memory")
    config = dict(clips=12, queries_per_task=0, max_clip_s=8.0)
    try:
        build("memory://safety-root", BuildConfig(**config), progress=False)
        assert not list(tmp_path.glob("reasonaudio-stage-*"))  # removed on success too, not left to the GC
        assert fs.isfile("/safety-root/manifest.json") and fs.isfile("/safety-root/.reasonaudio-output")
        assert not [p for p in fs.ls("/") if ".safety-root.tmp-" in p["name"]]
        with pytest.raises(UserError):
            build("memory://safety/b", BuildConfig(**config, atoms=str(tmp_path / "no-such-library")), progress=False)
        assert len(made) == 2  # the failed build did stage (it failed inside the output)
        assert not fs.exists("/safety") or not fs.ls("/safety")
        assert not list(tmp_path.glob("reasonaudio-stage-*"))
    finally:
        for path in ("/safety-root", "/safety"):
            if fs.exists(path):
                fs.rm(path, recursive=True)
