"""Several evaluation runs side by side (`reasonaudio report`): one markdown table, one grouped bar
chart and, where the runs measured one plan in several acoustic conditions, a curve across them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from reasonaudio.errors import UserError
from reasonaudio.evaluation.figures import condition_curves, task_bars
from reasonaudio.evaluation.results import load_run
from reasonaudio.evaluation.tables import condition_table, display_names, study_table, two_option_table
from reasonaudio.io.outputs import check_not_an_input, kind_of, output_directory

REPORT_KIND = "report"


def is_report(path: Path) -> bool:
    """Whether `path` is a comparison written by `compare` (a glob such as runs/* catches them)."""
    return Path(path).is_dir() and (kind_of(Path(path)) == REPORT_KIND or (Path(path) / "comparison.json").is_file())


def compare(paths: Sequence[Path], out: Path, *, force: bool = False) -> Path:
    """Several runs side by side: one markdown table, one grouped bar chart."""
    check_not_an_input(out, paths)
    if not paths:
        raise UserError("report: give at least one results directory")
    runs = [load_run(p) for p in paths]
    counts: dict[str, int] = {}
    for run in runs:
        counts[run["model"]] = counts.get(run["model"], 0) + 1
    seen: dict[str, int] = {}
    names = display_names(list(counts))
    for run, path in zip(runs, paths):
        label = names[run["model"]]
        if counts[run["model"]] > 1:
            seen[label] = seen.get(label, 0) + 1
            label = f"{label} ({Path(path).name or seen[label]})"
        run["label"] = label
    hashes = {r["manifest_hash"] for r in runs}
    conditions = acoustic_conditions(runs)
    if len(hashes) == 1:
        note = f"All runs share one benchmark (manifest sha256 `{next(iter(hashes))[:16]}…`)."
    elif conditions is not None:
        note = (f"The runs share one plan (identical qrels) rendered in {len(conditions)} acoustic conditions "
                f"({', '.join(conditions)}): results compare query by query.")
    else:
        note = "**Warning: these runs come from different benchmarks** (manifest hashes differ); compare with care."
    lines = [
        "# Retrieval comparison",
        "",
        note + " Values in %; Avg is the mean of the task means.",
        "",
        "## Retrieval (study layout)",
        "",
        study_table(runs),
        "",
        "## Two-option test (chance = 50%)",
        "",
        two_option_table(runs),
        "",
    ]
    if conditions is not None:
        lines += ["## Across acoustic conditions (Avg Acc@1 / two-option accuracy, %)", "", condition_table(runs, conditions), "",
                  "![conditions](conditions.png)", ""]
    with output_directory(out, REPORT_KIND, inputs=paths, force=force) as tmp:
        (tmp / "report.md").write_text("\n".join(lines))
        (tmp / "comparison.json").write_text(
            json.dumps({"runs": [{"path": str(p), **r} for p, r in zip(paths, runs)]}, indent=2, sort_keys=True) + "\n"
        )
        task_bars(runs, tmp / "comparison.png")
        if conditions is not None:
            condition_curves(runs, conditions, tmp / "conditions.png")
    return Path(out)


def _condition_of(run: dict) -> tuple[str, str] | None:
    """(condition name, qrels hash) of the benchmark a run measured: the condition is the benchmark
    folder's name (`reasonaudio scenes` names them). The hash comes from the results themselves;
    results written before they recorded it are read through the benchmark's manifest, where the
    path they recorded still leads to it."""
    root = Path(str(run.get("benchmark", "")))
    if run.get("qrels_hash"):
        return root.name, str(run["qrels_hash"])
    try:
        manifest = json.loads((root / "manifest.json").read_text())
        qrels = manifest["hashes"]["qrels.parquet"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return root.name, str(qrels)


def acoustic_conditions(runs: Sequence[dict]) -> list[str] | None:
    """The conditions, in first-given order, when the runs measured one plan (one qrels hash) in two
    or more conditions (contract §5: one plan, many conditions); None otherwise."""
    found = [_condition_of(r) for r in runs]
    if any(f is None for f in found) or len({f[1] for f in found}) != 1:
        return None
    names = list(dict.fromkeys(f[0] for f in found))
    if len(names) < 2:
        return None
    for run, (name, _) in zip(runs, found):
        run["condition"] = name
    return names
