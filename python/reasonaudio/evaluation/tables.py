"""The markdown tables of results and comparisons (values in %, Avg as the last column)."""

from __future__ import annotations

from collections.abc import Sequence

from reasonaudio.evaluation.metrics import AVG, METRIC_NAMES

LABELS = {
    "acc@1": "Acc@1",
    "ndcg@10": "nDCG@10",
    "recall@1": "R@1",
    "recall@5": "R@5",
    "recall@10": "R@10",
    "recall@100": "R@100",
    "mrr": "MRR",
}


def pct(x: float) -> str:
    """A fraction as a percentage with one decimal."""
    return f"{100 * x:.1f}"


def cell(entry: dict | None, with_ci: bool = False) -> str:
    """A summary entry ({mean, ci, n}) as a table cell, "–" where there is none."""
    if not entry:
        return "–"
    text = pct(entry["mean"])
    if with_ci and entry.get("ci"):
        lo, hi = entry["ci"]
        text += f" [{pct(lo)}, {pct(hi)}]"
    return text


def with_avg(task_order: Sequence[str]) -> list[str]:
    """The table columns: the tasks, then Avg."""
    return [*task_order, AVG]


def task_keys(table: dict) -> list[str]:
    return [t for t in table if t != AVG]


def union_tasks(runs: Sequence[dict]) -> list[str]:
    seen: list[str] = []
    for run in runs:
        for t in run["task_order"]:
            if t not in seen:
                seen.append(t)
    return seen


def avg_percent(run: dict, which: str) -> float | None:
    """A run's Avg in % of Acc@1 (`which="acc@1"`) or of the two-option accuracy (anything else)."""
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


def study_table(runs: Sequence[dict]) -> str:
    """Rows = runs, columns = tasks x (Acc@1, nDCG@10) + Avg, as in the ReasonAudio study (values in %)."""
    tasks = union_tasks(runs)
    head = "| Model | " + " | ".join(f"{t} Acc@1 | {t} nDCG@10" for t in with_avg(tasks)) + " |"
    rule = "|---|" + "---:|" * (2 * len(tasks) + 2)
    rows = []
    for run in runs:
        s = run["summary"]
        cells = []
        for t in with_avg(tasks):
            cells += [cell(s["acc@1"].get(t)), cell(s["ndcg@10"].get(t))]
        rows.append(f"| `{run['label']}` | " + " | ".join(cells) + " |")
    return "\n".join([head, rule, *rows])


def two_option_table(runs: Sequence[dict]) -> str:
    tasks = union_tasks(runs)
    head = "| Model | " + " | ".join(with_avg(tasks)) + " |"
    rule = "|---|" + "---:|" * (len(tasks) + 1)
    rows = []
    for run in runs:
        acc = run.get("two_option", {}).get("accuracy", {})
        rows.append(f"| `{run['label']}` | " + " | ".join(cell(acc.get(t)) for t in with_avg(tasks)) + " |")
    return "\n".join([head, rule, *rows])


def detail_table(run: dict) -> str:
    """Rows = tasks + Avg, columns = every metric with its 95% interval."""
    head = "| Task | n | " + " | ".join(LABELS[m] for m in METRIC_NAMES) + " |"
    rule = "|---|---:|" + "---:|" * len(METRIC_NAMES)
    rows = []
    for t in with_avg(run["task_order"]):
        n = run["summary"]["acc@1"][t]["n"]
        rows.append(f"| {t} | {n} | " + " | ".join(cell(run["summary"][m].get(t), True) for m in METRIC_NAMES) + " |")
    return "\n".join([head, rule, *rows])


def two_option_detail(run: dict) -> str:
    head = "| Task | n | accuracy [95% CI] | picked hard negative | ties |"
    rule = "|---|---:|---:|---:|---:|"
    rows = []
    t2 = run.get("two_option", {})
    if not t2:
        return "_No two-option pairs in this benchmark._"
    for t in with_avg(task_keys(t2["accuracy"])):
        rows.append(
            f"| {t} | {t2['accuracy'][t]['n']} | {cell(t2['accuracy'][t], True)} | "
            f"{cell(t2['picked_negative'][t])} | {cell(t2['tie'][t])} |"
        )
    return "\n".join([head, rule, *rows])


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
            a, t = (avg_percent(r, "acc@1"), avg_percent(r, "two")) if r else (None, None)
            cells.append("–" if a is None else f"{a:.1f} / {'–' if t is None else f'{t:.1f}'}")
        rows.append(f"| `{names[model]}` | " + " | ".join(cells) + " |")
    return "\n".join([head, rule, *rows])
