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
from reasonaudio.io.benchmark import acoustic_condition
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
    if conditions is not None:  # rows by model, each model's conditions from easy to hard
        models = list(dict.fromkeys(r["model"] for r in runs))
        order = sorted(range(len(runs)), key=lambda i: (models.index(runs[i]["model"]), conditions.index(runs[i]["condition"])))
        runs, paths = [runs[i] for i in order], [paths[i] for i in order]
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


def _manifest(root: Path) -> dict | None:
    try:
        manifest = json.loads((root / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def difficulty(scene: dict | None) -> tuple[int, int, float]:
    """Where a condition stands from easy to hard: clean audio first (no bed, no room), then beds by
    falling SNR (the middle of the range), each room after every condition without one."""
    background, room = (scene.get("background"), scene.get("room")) if scene else (None, None)
    if background is None and room is None:
        return (0, 0, 0.0)
    snr = scene.get("snr_db") if scene else None
    try:
        middle = (float(snr[0]) + float(snr[1])) / 2 if background is not None else float("inf")
    except (TypeError, ValueError, IndexError, KeyError):
        middle = float("inf")
    return (1, int(room is not None), -middle)


def _condition_of(run: dict) -> tuple[str, str, tuple | None] | None:
    """(condition name, qrels hash, difficulty) of the benchmark a run measured: the condition is
    the benchmark folder's name (`reasonaudio scenes` names them). The hash and the scene come from
    the results themselves; results files that lack them are read through the benchmark's manifest,
    where the path they recorded still leads to it (the difficulty is None where nothing tells it)."""
    root = Path(str(run.get("benchmark", "")))
    manifest = None if run.get("qrels_hash") and "scene" in run else _manifest(root)
    qrels = run.get("qrels_hash")
    if not qrels:
        try:
            qrels = manifest["hashes"]["qrels.parquet"]  # type: ignore[index]
        except (KeyError, TypeError):
            return None
    if "scene" in run:
        scene = run["scene"]
        rank = difficulty(scene) if scene is None or isinstance(scene, dict) else None
    else:
        rank = None if manifest is None else difficulty(acoustic_condition(manifest))
    return root.name, str(qrels), rank


def acoustic_conditions(runs: Sequence[dict]) -> list[str] | None:
    """The conditions from easy to hard (see `difficulty`; conditions nothing ranks keep their
    first-given order, after the others) when the runs measured one plan (one qrels hash) in two or
    more conditions (contract §5: one plan, many conditions); None otherwise."""
    found = [_condition_of(r) for r in runs]
    if any(f is None for f in found) or len({f[1] for f in found}) != 1:
        return None
    rank: dict[str, tuple] = {}
    for name, _, r in found:  # type: ignore[misc]
        rank.setdefault(name, (0, r) if r is not None else (1,))
    if len(rank) < 2:
        return None
    names = sorted(rank, key=lambda n: rank[n])  # stable: ties keep the first-given order
    for run, (name, _, _) in zip(runs, found):  # type: ignore[misc]
        run["condition"] = name
    return names
