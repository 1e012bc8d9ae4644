"""No command loses data: outputs never replace inputs or foreign folders, a second writer fails at
once, signals and OS errors leave nothing half-written, exit statuses say what happened."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reasonaudio.cli import main


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("outputs") / "b"
    assert main(["build", "--out", str(out), "--clips", "300", "--queries-per-task", "4", "--quiet"]) == 0
    return out


def _digest(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in sorted(root.rglob("*")) if p.is_file()}


def _cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reasonaudio", *args], capture_output=True, text=True, **kwargs)


def test_eval_never_writes_over_or_around_its_benchmark(bench: Path, capsys) -> None:
    before = _digest(bench)
    assert main(["eval", str(bench), "--model", "random", "--out", str(bench), "--quiet", "--no-figures"]) == 2
    assert "is the input" in capsys.readouterr().err
    assert main(["eval", str(bench), "--model", "random", "--out", str(bench.parent), "--quiet", "--no-figures", "--force"]) == 2
    assert "contains the input" in capsys.readouterr().err
    assert main(["eval", str(bench), "--model", "random", "--out", str(bench / "runs"), "--quiet", "--no-figures"]) == 2
    assert "lies inside the input" in capsys.readouterr().err
    assert _digest(bench) == before


def test_eval_and_report_replace_only_their_own_earlier_output(bench: Path, tmp_path: Path, capsys) -> None:
    r1, r2 = tmp_path / "runs" / "r1", tmp_path / "runs" / "r2"
    for run in (r1, r2):
        assert main(["eval", str(bench), "--model", "random", "--out", str(run), "--quiet", "--no-figures", "--bootstrap", "10"]) == 0
    assert main(["eval", str(bench), "--model", "random", "--out", str(r1), "--quiet", "--no-figures"]) == 2
    assert "pass --force" in capsys.readouterr().err
    assert main(["eval", str(bench), "--model", "random:3", "--out", str(r1), "--quiet", "--no-figures", "--force", "--bootstrap", "10"]) == 0
    assert json.loads((r1 / "results.json").read_text())["model"] == "random:3"
    capsys.readouterr()
    assert main(["report", str(r1), str(r2), "--out", str(r1)]) == 2
    assert "is the input" in capsys.readouterr().err
    assert (r1 / "results.json").is_file()
    # runs/* matches the comparison itself the second time: it is skipped, not read as a run
    comparison = tmp_path / "runs" / "comparison"
    assert main(["report", str(r1), str(r2), "--out", str(comparison)]) == 0
    assert main(["report", str(r1), str(r2), str(comparison), "--out", str(comparison), "--force"]) == 0
    assert "skipping" in capsys.readouterr().err
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep")
    assert main(["report", str(r1), "--out", str(foreign), "--force"]) == 2
    assert "holds no reasonaudio report" in capsys.readouterr().err
    assert (foreign / "notes.txt").read_text() == "keep"


def test_annotate_and_atoms_import_refuse_their_inputs(bench: Path, tmp_path: Path, capsys) -> None:
    events = tmp_path / "ev.tsv"
    events.write_text("filename\tonset\toffset\tevent_label\na.wav\t0.0\t1.0\tdog\n")
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query_id": "q", "logic": {"all": [{"has": "dog"}]}}) + "\n")
    assert main(["annotate", "--events", str(events), "--queries", str(queries), "--out", str(events)]) == 2
    assert "is the input" in capsys.readouterr().err
    assert events.read_text().startswith("filename")
    out = tmp_path / "qrels.tsv"
    assert main(["annotate", "--events", str(events), "--queries", str(queries), "--out", str(out)]) == 0
    assert main(["annotate", "--events", str(events), "--queries", str(queries), "--out", str(out)]) == 2
    assert "pass --force" in capsys.readouterr().err
    src = tmp_path / "src"
    (src / "dog").mkdir(parents=True)
    assert main(["atoms", "import", str(src), "--out", str(src), "--force"]) == 2
    assert "is the input" in capsys.readouterr().err
    assert (src / "dog").is_dir()


def test_annotate_names_silent_garbage(bench: Path, tmp_path: Path, capsys) -> None:
    assert main(["annotate", "--events", str(bench), "--queries", str(bench), "--out", str(tmp_path / "q.parquet"), "--sample-rate", "8000"]) == 2
    assert "contradicts" in capsys.readouterr().err
    events = tmp_path / "neg.tsv"
    events.write_text("filename\tonset\toffset\tevent_label\na.wav\t-0.5\t1.0\tdog\n")
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query_id": "q", "logic": {"all": [{"has": "dog"}]}}) + "\n")
    assert main(["annotate", "--events", str(events), "--queries", str(queries), "--out", str(tmp_path / "x.tsv")]) == 2
    assert "line 2" in capsys.readouterr().err and not (tmp_path / "x.tsv").exists()


def test_a_second_writer_on_the_same_out_fails_at_once(tmp_path: Path) -> None:
    out = tmp_path / "same"
    first = subprocess.Popen(
        [sys.executable, "-m", "reasonaudio", "build", "--out", str(out), "--clips", "2000", "--queries-per-task", "20", "--quiet"],
        stderr=subprocess.PIPE, text=True,
    )
    deadline = time.time() + 60
    while not (tmp_path / ".same.lock").exists() and time.time() < deadline:
        time.sleep(0.05)
    started = time.time()
    second = _cli("build", "--out", str(out), "--clips", "100", "--queries-per-task", "2", "--quiet")
    assert second.returncode == 2 and "another reasonaudio command is writing it" in second.stderr
    assert time.time() - started < 20
    assert first.wait(timeout=300) == 0
    assert json.loads((out / "manifest.json").read_text())["counts"]["clips"] == 2000
    assert not list(tmp_path.glob(".same.*"))


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_mid_build_leaves_nothing_behind(tmp_path: Path, sig, status) -> None:
    out = tmp_path / "b"
    proc = subprocess.Popen(
        [sys.executable, "-m", "reasonaudio", "build", "--out", str(out), "--clips", "4000", "--queries-per-task", "20", "--quiet"],
        stderr=subprocess.PIPE, text=True,
    )
    deadline = time.time() + 120
    # wait until it renders audio into its temporary folder
    while time.time() < deadline and not any(tmp_path.glob(".b.tmp-*/audio/*")):
        time.sleep(0.05)
    assert any(tmp_path.glob(".b.tmp-*")), "the build never started writing"
    sent = time.time()
    proc.send_signal(sig)
    rc = proc.wait(timeout=30)
    stderr = proc.stderr.read()
    assert rc == status, stderr
    assert time.time() - sent < 10
    assert "Traceback" not in stderr and "Panic" not in stderr
    assert not out.exists() and not list(tmp_path.iterdir())


def test_stale_temporaries_of_a_killed_run_are_named_and_removed(tmp_path: Path) -> None:
    stale = tmp_path / ".b.tmp-99999999"
    (stale / "audio").mkdir(parents=True)
    result = _cli("build", "--out", str(tmp_path / "b"), "--clips", "100", "--queries-per-task", "2", "--quiet")
    assert result.returncode == 0, result.stderr
    assert f"removed {stale}" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]


def test_os_errors_are_one_line_with_status_2(bench: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for args in (
        ["build", "--out", str(blocker / "b"), "--clips", "60", "--queries-per-task", "1", "--quiet"],
        ["eval", str(bench), "--model", "random", "--out", str(blocker / "r"), "--quiet"],
        ["validate", str(blocker)],
        ["inspect", str(blocker), "clip_000000"],
    ):
        result = _cli(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_compose_refuses_non_finite_snr(tmp_path: Path) -> None:
    for snr in ("nan", "-inf", "1e6"):
        result = _cli("compose", "build", "--out", str(tmp_path / "c"), "--cue", "environment", "--task", "math", "--n", "4", "--snr", snr)
        assert result.returncode == 2 and "--snr" in result.stderr, result.stderr
        assert not (tmp_path / "c").exists()
