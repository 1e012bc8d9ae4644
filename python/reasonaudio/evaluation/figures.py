"""The figures of results and comparisons (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from reasonaudio.errors import require
from reasonaudio.evaluation.tables import LABELS, avg_percent, display_names, union_tasks, with_avg

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
    columns = with_avg(union_tasks(runs))
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
    columns = with_avg(union_tasks(runs))
    fig, ax = plt.subplots(figsize=(max(6.5, 1.3 * len(columns) * (1 + 0.25 * len(runs))), 4.2))
    _grouped_bars(ax, runs, lambda r: r["two_option"].get("accuracy", {}), columns)
    ax.axhline(50, color="#C44E52", linestyle="--", linewidth=1.2, label="chance (50%)")
    ax.set_ylabel("accuracy (%)")
    ax.set_title("Two-option test: positive vs. hard negative")
    ax.legend(loc="upper right", fontsize=8, framealpha=0.9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


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
            ys = [(avg_percent(by[c], which) if c in by else None) for c in conditions]
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
