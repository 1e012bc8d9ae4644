"""`report` over runs of one plan in several acoustic conditions (contract §5): a table and a curve
of each model's Avg Acc@1 and two-option accuracy against the condition; runs of unrelated
benchmarks get no such section."""

from __future__ import annotations

import json
from pathlib import Path

from reasonaudio.builder import BuildConfig, build
from reasonaudio.builder.run import build_conditions
from reasonaudio.cli import main

SMALL = dict(clips=40, queries_per_task=3, threads=2)
BED = {"background": "noise:pink", "snr_db": [0.0, 0.0], "room": None, "pitch_semitones": None}


def _eval(bench: Path, model: str, out: Path) -> Path:
    assert main(["eval", str(bench), "--model", model, "--out", str(out), "--no-figures", "--bootstrap", "0", "--quiet"]) == 0
    return out


def test_report_draws_models_across_conditions(tmp_path: Path) -> None:
    built = build_conditions(tmp_path / "c", BuildConfig(**SMALL), {"clean": None, "pink0": BED}, progress=False)
    runs = [_eval(Path(built[c].path).resolve(), m, tmp_path / f"{m}-{c}") for m in ("structured", "random") for c in ("clean", "pink0")]
    assert main(["report", *map(str, runs), "--out", str(tmp_path / "rep")]) == 0
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "one plan (identical qrels) rendered in 2 acoustic conditions (clean, pink0)" in text
    assert "## Across acoustic conditions" in text
    row = next(line for line in text.splitlines() if line.startswith("| `structured` |") and "/" in line)
    assert row == "| `structured` | 100.0 / 100.0 | 100.0 / 100.0 |"  # reads text only: no condition can move it
    assert (tmp_path / "rep" / "conditions.png").stat().st_size > 1000


def test_conditions_are_read_from_the_results_so_a_relative_or_moved_benchmark_still_compares(tmp_path: Path, monkeypatch) -> None:
    build_conditions(tmp_path / "c", BuildConfig(**SMALL), {"clean": None, "pink0": BED}, progress=False)
    monkeypatch.chdir(tmp_path)  # the results record the path as given: relative to this directory
    runs = [_eval(Path("c") / cond, "structured", tmp_path / f"r-{cond}") for cond in ("clean", "pink0")]
    (tmp_path / "c").rename(tmp_path / "moved")
    monkeypatch.chdir(tmp_path / "moved")
    assert main(["report", *map(str, runs), "--out", str(tmp_path / "rep")]) == 0
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "rendered in 2 acoustic conditions (clean, pink0)" in text
    assert (tmp_path / "rep" / "conditions.png").is_file()


def test_conditions_run_from_clean_to_hardest_whatever_order_the_runs_are_given_in(tmp_path: Path) -> None:
    """`report runs/*` hands the runs over alphabetically (noisy0 before quiet20): the table, the
    note and the curve still run clean -> SNR 20 -> SNR 0, and each model's rows follow that order."""
    conditions = {"dry": None, "noisy0": BED, "quiet20": {**BED, "snr_db": [20.0, 20.0]}}
    built = build_conditions(tmp_path / "c", BuildConfig(**SMALL), conditions, progress=False)
    runs = sorted(_eval(Path(built[c].path).resolve(), m, tmp_path / "runs" / f"{m}-{c}")
                  for m in ("random", "structured") for c in conditions)
    assert [r.name for r in runs][:3] == ["random-dry", "random-noisy0", "random-quiet20"]  # alphabetical
    assert main(["report", *map(str, runs), "--out", str(tmp_path / "rep")]) == 0
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "rendered in 3 acoustic conditions (dry, quiet20, noisy0)" in text
    assert "| Model | dry | quiet20 | noisy0 |" in text
    rows = [line.split(" |")[0] for line in text.split("## Two-option test")[0].splitlines() if line.startswith("| `")]
    assert rows == [f"| `{m} ({m}-{c})`" for m in ("random", "structured") for c in ("dry", "quiet20", "noisy0")]

    # results files without the recorded scene are ranked through the benchmark's manifest
    for run in runs:
        results = json.loads((run / "results.json").read_text())
        del results["scene"]
        (run / "results.json").write_text(json.dumps(results))
    assert main(["report", *map(str, runs), "--out", str(tmp_path / "rep2")]) == 0
    assert "| Model | dry | quiet20 | noisy0 |" in (tmp_path / "rep2" / "report.md").read_text()


def test_difficulty_puts_clean_first_then_beds_by_falling_snr_then_rooms() -> None:
    from reasonaudio.evaluation.compare import difficulty

    def bed(snr: float, room: str | None = None) -> dict:
        return {"background": "noise:pink", "snr_db": [snr, snr], "room": room}

    scenes = {"pink_snr10_room": bed(10, "simulated:0.3,0.6"), "pink_snr0": bed(0), "clean": None,
              "room_only": {"background": None, "snr_db": None, "room": "simulated:0.3,0.6"},
              "pink_snr20": bed(20), "pink_snr10": bed(10), "no_bed": {"background": None, "snr_db": None, "room": None}}
    ranked = sorted(scenes, key=lambda n: difficulty(scenes[n]))
    assert ranked == ["clean", "no_bed", "pink_snr20", "pink_snr10", "pink_snr0", "room_only", "pink_snr10_room"]


def test_unrelated_benchmarks_get_no_condition_section(tmp_path: Path) -> None:
    a = build(tmp_path / "a", BuildConfig(**SMALL, seed=1), progress=False)
    b = build(tmp_path / "b", BuildConfig(**SMALL, seed=2), progress=False)
    runs = [_eval(Path(x.path).resolve(), "structured", tmp_path / f"r{i}") for i, x in enumerate((a, b))]
    assert main(["report", *map(str, runs), "--out", str(tmp_path / "rep")]) == 0
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "different benchmarks" in text and "Across acoustic conditions" not in text
    assert not (tmp_path / "rep" / "conditions.png").exists()


def test_tables_and_legends_name_an_absolute_model_file_by_its_name_unless_two_would_read_alike() -> None:
    from reasonaudio.evaluation.tables import display_names

    names = display_names(["detect:/work/x/default.pt", "detect:/a/m.pt", "detect:/b/m.pt", "clap:laion/clap-htsat",
                           "detect:runs/scene.pt", "structured", "two-stage:oracle+bm25", "detect:C:\\models\\w.pt"])
    assert names["detect:/work/x/default.pt"] == "detect:default.pt"
    assert names["detect:/a/m.pt"] == "detect:/a/m.pt" and names["detect:/b/m.pt"] == "detect:/b/m.pt"  # would clash
    assert names["clap:laion/clap-htsat"] == "clap:laion/clap-htsat" and names["detect:runs/scene.pt"] == "detect:runs/scene.pt"
    assert names["structured"] == "structured" and names["two-stage:oracle+bm25"] == "two-stage:oracle+bm25"
    assert names["detect:C:\\models\\w.pt"] == "detect:w.pt"
