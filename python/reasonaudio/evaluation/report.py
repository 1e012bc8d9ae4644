"""Write an evaluation's results (JSON, markdown, parquet, figures) and compare several runs.

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

import logging
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from reasonaudio.errors import UserError, require
from reasonaudio.evaluation.metrics import AVG, METRIC_NAMES
from reasonaudio.io.outputs import check_not_an_input, kind_of, output_directory

log = logging.getLogger(__name__)

RESULTS_FORMAT = "reasonaudio-results/1"
RESULTS_KIND = "eval results"
REPORT_KIND = "report"
LABELS = {
    "acc@1": "Acc@1",
    "ndcg@10": "nDCG@10",
    "recall@1": "R@1",
    "recall@5": "R@5",
    "recall@10": "R@10",
    "recall@100": "R@100",
    "mrr": "MRR",
}


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _cell(entry: dict | None, with_ci: bool = False) -> str:
    if not entry:
        return "–"
    text = _pct(entry["mean"])
    if with_ci and entry.get("ci"):
        lo, hi = entry["ci"]
        text += f" [{_pct(lo)}, {_pct(hi)}]"
    return text


def _columns(task_order: Sequence[str]) -> list[str]:
    return [*task_order, AVG]


def study_table(runs: Sequence[dict]) -> str:
    """Rows = runs, columns = tasks x (Acc@1, nDCG@10) + Avg, as in the ReasonAudio study (values in %)."""
    tasks = _union_tasks(runs)
    head = "| Model | " + " | ".join(f"{t} Acc@1 | {t} nDCG@10" for t in _columns(tasks)) + " |"
    rule = "|---|" + "---:|" * (2 * len(tasks) + 2)
    rows = []
    for run in runs:
        s = run["summary"]
        cells = []
        for t in _columns(tasks):
            cells += [_cell(s["acc@1"].get(t)), _cell(s["ndcg@10"].get(t))]
        rows.append(f"| `{run['label']}` | " + " | ".join(cells) + " |")
    return "\n".join([head, rule, *rows])


def two_option_table(runs: Sequence[dict]) -> str:
    tasks = _union_tasks(runs)
    head = "| Model | " + " | ".join(_columns(tasks)) + " |"
    rule = "|---|" + "---:|" * (len(tasks) + 1)
    rows = []
    for run in runs:
        acc = run.get("two_option", {}).get("accuracy", {})
        rows.append(f"| `{run['label']}` | " + " | ".join(_cell(acc.get(t)) for t in _columns(tasks)) + " |")
    return "\n".join([head, rule, *rows])


def detail_table(run: dict) -> str:
    """Rows = tasks + Avg, columns = every metric with its 95% interval."""
    head = "| Task | n | " + " | ".join(LABELS[m] for m in METRIC_NAMES) + " |"
    rule = "|---|---:|" + "---:|" * len(METRIC_NAMES)
    rows = []
    for t in _columns(run["task_order"]):
        n = run["summary"]["acc@1"][t]["n"]
        rows.append(f"| {t} | {n} | " + " | ".join(_cell(run["summary"][m].get(t), True) for m in METRIC_NAMES) + " |")
    return "\n".join([head, rule, *rows])


def two_option_detail(run: dict) -> str:
    head = "| Task | n | accuracy [95% CI] | picked hard negative | ties |"
    rule = "|---|---:|---:|---:|---:|"
    rows = []
    t2 = run.get("two_option", {})
    if not t2:
        return "_No two-option pairs in this benchmark._"
    for t in _columns(_task_keys(t2["accuracy"])):
        rows.append(
            f"| {t} | {t2['accuracy'][t]['n']} | {_cell(t2['accuracy'][t], True)} | "
            f"{_cell(t2['picked_negative'][t])} | {_cell(t2['tie'][t])} |"
        )
    return "\n".join([head, rule, *rows])


def _task_keys(table: dict) -> list[str]:
    return [t for t in table if t != AVG]


def _union_tasks(runs: Sequence[dict]) -> list[str]:
    seen: list[str] = []
    for run in runs:
        for t in run["task_order"]:
            if t not in seen:
                seen.append(t)
    return seen


def results_dict(result) -> dict:
    from reasonaudio._core import __version__

    return {
        "format": RESULTS_FORMAT,
        "tool_version": __version__,
        "model": result.spec,
        "benchmark": result.benchmark,
        "manifest_hash": result.manifest_hash,
        "qrels_hash": result.qrels_hash,
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
    result.per_query.write_parquet(tmp / "per_query.parquet")
    result.rankings.write_parquet(tmp / "rankings.parquet")
    result.two_option_pairs.write_parquet(tmp / "two_option.parquet")
    if result.captions is not None:
        result.captions.write_parquet(tmp / "captions.parquet")
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
    try:
        run = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise UserError(f"{file}: invalid JSON at line {err.lineno}: {err.msg}") from None
    except UnicodeDecodeError as err:
        raise UserError(f"{file}: not UTF-8 text (byte {err.start})") from None
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


def _avg(run: dict, which: str) -> float | None:
    table = run["summary"]["acc@1"] if which == "acc@1" else run.get("two_option", {}).get("accuracy", {})
    entry = table.get(AVG)
    return None if not entry else 100 * entry["mean"]


def display_names(models: Sequence[str]) -> dict[str, str]:
    """Each model spec as a table or legend shows it: an absolute file argument, which names the
    machine more than the model, by its file name (`detect:/long/path/m.pt` -> `detect:m.pt`), unless
    two specs would then read alike. Relative paths and hub ids (`org/model`) stay as given."""
    def short(model: str) -> str:
        kind, sep, arg = model.partition(":")
        absolute = arg.startswith(("/", "~", "\\")) or (len(arg) > 2 and arg[1] == ":" and arg[2] in "/\\")
        name = arg.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        return f"{kind}:{name}" if sep and absolute and name else model

    shown = {m: short(m) for m in models}
    clashes = {v for v in shown.values() if list(shown.values()).count(v) > 1}
    return {m: (m if v in clashes else v) for m, v in shown.items()}


def condition_table(runs: Sequence[dict], conditions: Sequence[str]) -> str:
    models = list(dict.fromkeys(r["model"] for r in runs))
    names = display_names(models)
    head = "| Model | " + " | ".join(conditions) + " |"
    rule = "|---|" + "---:|" * len(conditions)
    rows = []
    for model in models:
        by = {r["condition"]: r for r in runs if r["model"] == model}
        cells = []
        for c in conditions:
            r = by.get(c)
            a, t = (_avg(r, "acc@1"), _avg(r, "two")) if r else (None, None)
            cells.append("–" if a is None else f"{a:.1f} / {'–' if t is None else f'{t:.1f}'}")
        rows.append(f"| `{names[model]}` | " + " | ".join(cells) + " |")
    return "\n".join([head, rule, *rows])


def condition_curves(runs: Sequence[dict], conditions: Sequence[str], path: Path) -> None:
    """Avg Acc@1 and two-option accuracy of each model against the acoustic condition."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(max(9, 1.5 * len(conditions) * 2), 4.2), sharex=True)
    x = np.arange(len(conditions))
    models = list(dict.fromkeys(r["model"] for r in runs))
    names = display_names(models)
    for i, model in enumerate(models):
        by = {r["condition"]: r for r in runs if r["model"] == model}
        for ax, which in zip(axes, ("acc@1", "two")):
            ys = [(_avg(by[c], which) if c in by else None) for c in conditions]
            ax.plot(x, [np.nan if y is None else y for y in ys], marker="o", color=TASK_COLOURS[i % len(TASK_COLOURS)], label=names[model])
    axes[0].set_title("Avg Acc@1")
    axes[1].set_title("Two-option accuracy")
    axes[1].axhline(50, color="#C44E52", linestyle="--", linewidth=1.0, label="chance (50%)")
    for ax in axes:
        ax.set_xticks(x, list(conditions), rotation=20, ha="right", fontsize=8)
        ax.set_ylabel("%")
        ax.set_ylim(0, 100)
    axes[1].legend(loc="lower left", fontsize=8, framealpha=0.9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------
# Figures (matplotlib, Agg backend: no display needed)

TASK_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C")


def _pyplot():
    require("matplotlib", "figures", "the figures of eval and report (eval --no-figures leaves them out)")
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _errors(entries: list[dict | None]) -> np.ndarray | None:
    """Asymmetric error bars (in %) from bootstrap intervals; None when no interval was computed."""
    if not entries or any(e is None or not e.get("ci") for e in entries):
        return None
    lo = [100 * (e["mean"] - e["ci"][0]) for e in entries]
    hi = [100 * (e["ci"][1] - e["mean"]) for e in entries]
    return np.clip(np.array([lo, hi]), 0, None)


def _grouped_bars(ax, runs: Sequence[dict], table_of, columns: Sequence[str]) -> None:
    n = len(runs)
    width = 0.8 / n
    x = np.arange(len(columns))
    for i, run in enumerate(runs):
        table = table_of(run)
        entries = [table.get(c) for c in columns]
        means = [100 * e["mean"] if e else np.nan for e in entries]
        errs = _errors(entries)
        bars = ax.bar(
            x + (i - (n - 1) / 2) * width,
            means,
            width,
            yerr=errs,
            capsize=3 if errs is not None else 0,
            label=run["label"],
            color=TASK_COLOURS[i % len(TASK_COLOURS)],
            error_kw={"elinewidth": 1, "ecolor": "#333333"},
        )
        if n <= 3:
            ax.bar_label(bars, labels=[f"{m:.0f}" if np.isfinite(m) else "" for m in means], fontsize=8, padding=2)
    ax.set_xticks(x, columns)
    ax.set_ylim(0, 105)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


def task_bars(runs: Sequence[dict], path: Path) -> None:
    """Acc@1 and nDCG@10 per task (+ Avg), one bar per run, 95% intervals as error bars."""
    plt = _pyplot()
    columns = _columns(_union_tasks(runs))
    fig, axes = plt.subplots(1, 2, figsize=(max(9, 1.6 * len(columns) * (1 + 0.25 * len(runs))), 4.2), sharey=True)
    for ax, metric in zip(axes, ("acc@1", "ndcg@10")):
        _grouped_bars(ax, runs, lambda r, m=metric: r["summary"][m], columns)
        ax.set_title(LABELS[metric])
    axes[0].set_ylabel("%")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(runs), 3), frameon=False, fontsize=9)
    fig.suptitle("Retrieval per task (error bars: 95% bootstrap interval)", fontsize=11)
    fig.tight_layout(rect=(0, 0.06 + 0.04 * ((len(runs) - 1) // 3), 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def two_option_bars(runs: Sequence[dict], path: Path) -> None:
    """Two-option accuracy per task with the 50% chance line."""
    plt = _pyplot()
    columns = _columns(_union_tasks(runs))
    fig, ax = plt.subplots(figsize=(max(6.5, 1.3 * len(columns) * (1 + 0.25 * len(runs))), 4.2))
    _grouped_bars(ax, runs, lambda r: r["two_option"].get("accuracy", {}), columns)
    ax.axhline(50, color="#C44E52", linestyle="--", linewidth=1.2, label="chance (50%)")
    ax.set_ylabel("accuracy (%)")
    ax.set_title("Two-option test: positive vs. hard negative")
    ax.legend(loc="upper right", fontsize=8, framealpha=0.9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def tsne_plot(result, path: Path, *, n_queries: int = 8, seed: int = 0, n_background: int = 300) -> None:
    """t-SNE of a few queries with their two-option positive and hard negative (plus grey context clips).

    Queries are picked round-robin over tasks from the two-option pairs, in table order (no
    randomness), so the same run gives the same picture.
    """
    from reasonaudio.errors import require

    TSNE = require("sklearn.manifold", "eval", "the t-SNE figure (scikit-learn)").TSNE

    plt = _pyplot()
    pairs = result.two_option_pairs
    if pairs.height == 0:
        return
    by_task: dict[str, list[int]] = {}
    for i, task in enumerate(pairs["task"].to_list()):
        by_task.setdefault(task, []).append(i)
    chosen: list[int] = []
    while len(chosen) < min(n_queries, pairs.height):
        for rows in by_task.values():
            taken = [r for r in rows if r not in chosen]
            if taken and len(chosen) < n_queries:
                chosen.append(taken[0])
    q_ids = result.per_query["query_id"].to_list()
    q_index = {q: i for i, q in enumerate(q_ids)}
    c_index = {c: i for i, c in enumerate(result.clip_ids)}
    picked_clips = set()
    points, kinds, groups = [], [], []
    for g, row in enumerate(chosen):
        qid, pos, neg = pairs["query_id"][row], pairs["positive_clip_id"][row], pairs["negative_clip_id"][row]
        points += [result.query_vectors[q_index[qid]], result.clip_vectors[c_index[pos]], result.clip_vectors[c_index[neg]]]
        kinds += ["query", "positive", "hard negative"]
        groups += [g, g, g]
        picked_clips |= {c_index[pos], c_index[neg]}
    others = [i for i in range(result.clip_vectors.shape[0]) if i not in picked_clips][:n_background]
    for i in others:
        points.append(result.clip_vectors[i])
        kinds.append("other clip")
        groups.append(-1)
    x = np.stack(points).astype(np.float32)
    if x.shape[0] < 4:
        return
    perplexity = float(min(30.0, (x.shape[0] - 1) / 3))
    xy = TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed, metric="cosine").fit_transform(x)

    fig, ax = plt.subplots(figsize=(8, 6.5))
    groups_arr, kinds_arr = np.array(groups), np.array(kinds)
    bg = groups_arr == -1
    if bg.any():
        ax.scatter(xy[bg, 0], xy[bg, 1], s=8, c="#BBBBBB", label="other clips", zorder=1)
    markers = {"query": ("*", 180), "positive": ("o", 60), "hard negative": ("X", 70)}
    for g, row in enumerate(chosen):
        colour = TASK_COLOURS[g % len(TASK_COLOURS)]
        sel = groups_arr == g
        q_xy = xy[sel & (kinds_arr == "query")][0]
        for kind, (marker, size) in markers.items():
            p = xy[sel & (kinds_arr == kind)][0]
            ax.scatter(*p, marker=marker, s=size, c=colour, edgecolors="black", linewidths=0.6, zorder=3)
            if kind != "query":
                ax.plot([q_xy[0], p[0]], [q_xy[1], p[1]], color=colour, alpha=0.6,
                        linestyle="-" if kind == "positive" else ":", zorder=2)
        ax.annotate(f"{pairs['query_id'][row]} ({pairs['task'][row]})", q_xy, fontsize=7,
                    xytext=(4, 4), textcoords="offset points")
    for kind, (marker, size) in markers.items():
        ax.scatter([], [], marker=marker, s=size, c="white", edgecolors="black", label=kind)
    ax.legend(loc="best", fontsize=8, framealpha=0.9)
    ax.set_title(f"t-SNE of query / positive / hard-negative embeddings — {result.spec}", fontsize=10)
    ax.set_xticks([])
    ax.set_yticks([])
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
