"""Write an evaluation's results directory (JSON, markdown, parquet, figures) and read one back.

Layout of a results directory written by :func:`write_results`:

```
results.json        every number: per task and Avg (mean, 95% bootstrap interval, n) of every metric
                    and of the two-option test, the model spec, the benchmark path and manifest hash
report.md           the study-shaped tables (tasks x Acc@1 / nDCG@10 + Avg; two-option accuracy)
per_query.parquet   one row per query: every metric, rank of the first relevant clip, n relevant
rankings.parquet    top-100 clips per query: query_id, rank (1-based), clip_id, score, relevant
two_option.parquet  one row per pair: both scores and the outcome
captions.parquet    two-stage models only: clip_id, caption (what the captioner said; reusable as
                    `two-stage:captions=captions.parquet+RANKER`)
figures/            tasks.png, two_option.png, tsne.png (embedding models only)
```
Everything is written to a temporary sibling directory first and renamed into place.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from reasonaudio.errors import UserError
from reasonaudio.evaluation.figures import task_bars, tsne_plot, two_option_bars
from reasonaudio.evaluation.tables import detail_table, study_table, two_option_detail, two_option_table
from reasonaudio.io.jsonfile import read_json
from reasonaudio.io.outputs import output_directory
from reasonaudio.io.parquet import write_table

log = logging.getLogger(__name__)

RESULTS_FORMAT = "reasonaudio-results/1"
RESULTS_KIND = "eval results"


def results_dict(result) -> dict:
    from reasonaudio._core import __version__

    return {
        "format": RESULTS_FORMAT,
        "tool_version": __version__,
        "model": result.spec,
        "benchmark": result.benchmark,
        "manifest_hash": result.manifest_hash,
        "qrels_hash": result.qrels_hash,
        "scene": result.scene,
        "settings": result.settings,
        "n_queries": result.per_query.height,
        "n_clips": len(result.clip_ids),
        "task_order": result.task_order,
        "summary": result.summary,
        "two_option": result.two_option,
    }


def render_markdown(run: dict) -> str:
    return "\n".join(
        [
            f"# Retrieval results: `{run['model']}`",
            "",
            f"Benchmark `{run['benchmark']}` (manifest sha256 `{run['manifest_hash'][:16]}…`), "
            f"{run['n_queries']} queries. Values in %; intervals are 95% bootstrap intervals over queries "
            f"({run['settings']['bootstrap']} resamples, seed {run['settings']['seed']}). Avg is the mean of the task means.",
            "",
            "## Retrieval (study layout)",
            "",
            study_table([run]),
            "",
            "## All metrics",
            "",
            detail_table(run),
            "",
            "## Two-option test (chance = 50%; ties count as half)",
            "",
            two_option_detail(run),
            "",
        ]
    )


def write_results(
    result, out: Path, *, figures: bool = True, tsne_queries: int = 8, seed: int = 0, force: bool = False
) -> Path:
    """Write a run's results directory (refusing anything but an earlier results directory, which
    `force` replaces)."""
    with output_directory(out, RESULTS_KIND, force=force) as tmp:
        write_results_into(result, tmp, figures=figures, tsne_queries=tsne_queries, seed=seed)
    return Path(out)


def write_results_into(result, tmp: Path, *, figures: bool = True, tsne_queries: int = 8, seed: int = 0) -> None:
    """Write a run's results into the empty directory `tmp`."""
    run = results_dict(result)
    run["label"] = result.spec
    serialised = {k: v for k, v in run.items() if k != "label"}
    (tmp / "results.json").write_text(json.dumps(serialised, indent=2, sort_keys=True) + "\n")
    (tmp / "report.md").write_text(render_markdown(run))
    write_table(result.per_query, tmp / "per_query.parquet")
    write_table(result.rankings, tmp / "rankings.parquet")
    write_table(result.two_option_pairs, tmp / "two_option.parquet")
    if result.captions is not None:
        write_table(result.captions, tmp / "captions.parquet")
    if figures:
        (tmp / "figures").mkdir()
        task_bars([run], tmp / "figures" / "tasks.png")
        if run["two_option"]:
            two_option_bars([run], tmp / "figures" / "two_option.png")
        if result.query_vectors is not None:
            # t-SNE of a few hundred points takes tens of seconds on two cores: say what runs
            log.info("figures: t-SNE of query, positive and hard-negative embeddings …")
            tsne_plot(result, tmp / "figures" / "tsne.png", n_queries=tsne_queries, seed=seed)


def load_run(path: Path) -> dict:
    path = Path(path)
    file = path / "results.json" if path.is_dir() else path
    if not file.is_file():
        raise UserError(f"{path}: no results.json (expected the output directory of `reasonaudio eval`)")
    run = read_json(file)
    if not isinstance(run, dict):
        raise UserError(f"{file}: not a reasonaudio results file (a JSON {type(run).__name__}, expected an object)")
    if run.get("format") != RESULTS_FORMAT:
        raise UserError(f"{file}: not a reasonaudio results file (format {run.get('format')!r}, expected {RESULTS_FORMAT!r})")
    shapes = {"model": str, "manifest_hash": str, "summary": dict, "task_order": list, "two_option": dict}
    wrong = [f"{k} ({shapes[k].__name__} expected)" for k in shapes if not isinstance(run.get(k), shapes[k])]
    if wrong:
        raise UserError(f"{file}: malformed results: {', '.join(wrong)}")
    try:  # the tables read deeper into summary and two_option: try them on this run alone
        study_table([{**run, "label": run["model"]}])
        two_option_table([{**run, "label": run["model"]}])
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
        raise UserError(f"{file}: malformed results ({err.__class__.__name__}: {err})") from None
    return run
