"""The ReasonAudio study's table: its models as rows, our figures beside its published ones.

`ROWS` are the study's model families by their pinned Hub ids (two-stage captioner x ranker pairs,
CLIP-style, MLLM embedders) and the reference rows (`structured`, `two-stage:oracle+bm25`, `detect:`,
`random`); `reasonaudio study` runs each through `eval` and hands the results here. The table follows the
study's layout: Acc@1 and nDCG@10 per task and their Avg, then the two-option accuracy per task; where
the study publishes a figure (data/study_figures.json, which names its source) it is shown in
parentheses beside ours. Written as markdown, JSON and a figure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from reasonaudio.evaluation.metrics import AVG

TASKS = ("negation", "order", "overlap", "duration", "mix")


@dataclass(frozen=True)
class StudyRow:
    name: str
    paradigm: str  # a key of the registry's PARADIGMS (MLLM, CLIP, two-stage, detect, baseline)
    title: str
    spec: str  # `{placeholders}` filled from the command's options; "" for a model left out
    reference: bool = False  # a reference row, not one of the study's models
    needs: str = ""  # the option a placeholder comes from, named when it is missing


_QWEN2 = "qwen2audio=Qwen/Qwen2-Audio-7B-Instruct"
_STEP = "stepaudio=stepfun-ai/Step-Audio-2-mini,code={stepaudio_code}"
_BGE = "bge-m3=BAAI/bge-m3"
_QWEN3 = "qwen3-emb=Qwen/Qwen3-Embedding-8B"
_OMNI_PROCESSOR = "processor=Qwen/Qwen2.5-Omni-7B"

ROWS = (
    StudyRow("qwen2audio-bge-m3", "two-stage", "Qwen2-Audio → BGE-M3", f"two-stage:{_QWEN2}+{_BGE}"),
    StudyRow("qwen2audio-qwen3", "two-stage", "Qwen2-Audio → Qwen3-Embedding", f"two-stage:{_QWEN2}+{_QWEN3}"),
    StudyRow("stepaudio-bge-m3", "two-stage", "Step-Audio → BGE-M3", f"two-stage:{_STEP}+{_BGE}",
             needs="--stepaudio-code DIR (a checkout of github.com/stepfun-ai/Step-Audio2)"),
    StudyRow("stepaudio-qwen3", "two-stage", "Step-Audio → Qwen3-Embedding", f"two-stage:{_STEP}+{_QWEN3}",
             needs="--stepaudio-code DIR (a checkout of github.com/stepfun-ai/Step-Audio2)"),
    StudyRow("msclap", "CLIP", "CLAP (Elizalde et al.)", "msclap:microsoft/msclap,version=2023"),
    StudyRow("audioclip", "CLIP", "AudioCLIP", ""),
    StudyRow("wav2clip", "CLIP", "Wav2CLIP", "wav2clip:{wav2clip},clip=openai/clip-vit-base-patch32",
             needs="--wav2clip FILE (Wav2CLIP.pt from the lyrebird-wav2clip GitHub release; not on the Hub)"),
    StudyRow("lco-omni-3b", "MLLM", "LCO-Embedding-Omni-3B", "lco-omni:LCO-Embedding/LCO-Embedding-Omni-3B"),
    StudyRow("lco-omni-7b", "MLLM", "LCO-Embedding-Omni-7B", "lco-omni:LCO-Embedding/LCO-Embedding-Omni-7B"),
    StudyRow("e5-omni-7b", "MLLM", "e5-omni-7B", f"e5-omni:Haon-Chen/e5-omni-7B,{_OMNI_PROCESSOR}"),
    StudyRow("omniembed-7b", "MLLM", "OmniEmbed-7B",
             f"omniembed:Tevatron/OmniEmbed-v0.1,base=Tevatron/Qwen2.5-Omni-7B-Thinker,{_OMNI_PROCESSOR}"),
    StudyRow("structured", "baseline", "structured (query logic on true events)", "structured", reference=True),
    StudyRow("oracle-bm25", "two-stage", "oracle captions → BM25", "two-stage:oracle+bm25", reference=True),
    StudyRow("detect", "detect", "detect-then-reason", "detect:{detect}", reference=True),
    StudyRow("random", "baseline", "random", "random:0", reference=True),
)

_PARADIGM_TITLES = {"two-stage": "two-stage", "CLIP": "CLIP-style", "MLLM": "MLLM embedder", "detect": "detect-then-reason",
                    "baseline": "baseline"}


def published() -> dict:
    """The study's figures (data/study_figures.json) with the source they come from."""
    return json.loads(resources.files("reasonaudio").joinpath("data/study_figures.json").read_text(encoding="utf-8"))


def fill(row: StudyRow, values: dict[str, str | None]) -> str | None:
    """The row's spec with its placeholders filled; None when one has no value (the row cannot run)."""
    spec = row.spec
    for key, value in values.items():
        token = "{" + key + "}"
        if token in spec:
            if not value:
                return None
            spec = spec.replace(token, value)
    return spec


def measured(results: dict) -> dict:
    """What the table shows of one results.json: Acc@1, nDCG@10 and two-option accuracy per task and Avg (%)."""
    out: dict[str, dict[str, float]] = {}
    for key in ("acc@1", "ndcg@10"):
        out[key] = {t: 100 * e["mean"] for t, e in results["summary"][key].items() if e}
    out["two_option"] = {t: 100 * e["mean"] for t, e in results.get("two_option", {}).get("accuracy", {}).items() if e}
    return out


def study_figure(row: StudyRow, figures: dict, metric: str, task: str):
    """The study's figure for a row's cell: the model's own, else its paradigm's bound (Avg only), else None."""
    if row.reference:
        return None
    own = figures["rows"].get(row.name, {}).get(metric, {}).get(task)
    if own is not None:
        return own
    return figures["paradigms"].get(_PARADIGM_TITLES.get(row.paradigm, row.paradigm), {}).get(metric, {}).get(task)


def _cell(ours: float | None, theirs) -> str:
    text = "–" if ours is None else f"{ours:.1f}"
    return text if theirs is None else f"{text} ({theirs})"


def _tasks(entries: list[dict]) -> list[str]:
    seen = [t for e in entries if e.get("measured") for t in e["measured"]["acc@1"] if t != AVG]
    extra = sorted(set(seen) - set(TASKS))
    return [t for t in TASKS if not seen or t in seen] + extra


def markdown(entries: list[dict], figures: dict) -> str:
    """Both tables in the study's layout; `entries` are `table_entries` output."""
    tasks = _tasks(entries)
    cols = [*tasks, AVG]
    head = "| Paradigm | Model | " + " | ".join(f"{t} Acc@1 | {t} nDCG@10" for t in cols) + " | status |"
    rule = "|---|---|" + "---:|" * (2 * len(cols)) + "---|"
    lines = ["# The ReasonAudio study's models on this benchmark", "",
             f"Values in %; the study's published figure, where it gives one, in parentheses. Source: {figures['source']}",
             "", "## Retrieval (Acc@1 and nDCG@10 per task)", "", head, rule]
    for e in entries:
        row, m = e["row"], e.get("measured")
        cells = []
        for t in cols:
            for metric in ("acc@1", "ndcg@10"):
                cells.append(_cell(m[metric].get(t) if m else None, study_figure(row, figures, metric, t)))
        title = f"{row.title} (reference)" if row.reference else row.title
        lines.append(f"| {_PARADIGM_TITLES.get(row.paradigm, row.paradigm)} | {title} | " + " | ".join(cells)
                     + f" | {e['status']} |")
    lines += ["", "## Two-option test (accuracy per task; chance 50%)", "",
              "| Model | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    for e in entries:
        row, m = e["row"], e.get("measured")
        cells = [_cell(m["two_option"].get(t) if m else None, study_figure(row, figures, "two_option", t)) for t in cols]
        lines.append(f"| {row.title} | " + " | ".join(cells) + " |")
    if figures.get("notes"):
        lines += ["", "The study also states: " + " ".join(figures["notes"])]
    return "\n".join(lines) + "\n"


def as_json(entries: list[dict], figures: dict) -> dict:
    return {"source": figures["source"], "published": figures,
            "rows": [{"name": e["row"].name, "paradigm": e["row"].paradigm, "model": e["row"].title,
                      "reference": e["row"].reference, "spec": e.get("spec"), "status": e["status"],
                      "weights": e.get("weights", []), "measured": e.get("measured")} for e in entries]}


def figure(entries: list[dict], figures: dict, path: Path) -> None:
    """Avg Acc@1 and Avg two-option accuracy per row; the study's figures as markers where it gives one."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    shown = [e for e in entries if e.get("measured")]
    fig, axes = plt.subplots(1, 2, figsize=(max(8, 0.9 * len(shown) + 4), 4.5), sharey=True)
    for ax, metric, title in ((axes[0], "acc@1", "Avg Acc@1 (%)"), (axes[1], "two_option", "Avg two-option accuracy (%)")):
        names = [e["row"].title for e in shown]
        ours = [e["measured"][metric].get(AVG, float("nan")) for e in shown]
        ax.barh(range(len(shown)), ours, color=["#8C8C8C" if e["row"].reference else "#4C72B0" for e in shown])
        for i, e in enumerate(shown):
            theirs = study_figure(e["row"], figures, metric, AVG)
            if isinstance(theirs, (int, float)):
                ax.plot([theirs], [i], marker="D", color="#C44E52", label="study" if i == 0 else None)
        ax.set_yticks(range(len(shown)), names, fontsize=8)
        ax.set_xlim(0, 100)
        ax.set_title(title, fontsize=10)
        if metric == "two_option":
            ax.axvline(50, color="#C44E52", linestyle="--", linewidth=1)
    axes[0].invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
