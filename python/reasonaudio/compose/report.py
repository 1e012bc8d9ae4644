"""results.json + samples.jsonl + report.md + figures for one or more scored compose sets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reasonaudio.errors import require
from reasonaudio.compose.io import write_jsonl_atomic, write_text_atomic


def _fmt(v: Any, digits: int = 1) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def condition_label(ds: dict[str, Any], group: str) -> str:
    base = ds["cue"]
    if group.startswith("snr="):
        base += f" {group[4:]} dB"
    elif len(ds.get("snrs") or []) > 1:
        base += " all SNRs"
    return f"{base} / {ds['task']}"


def _conditions(results: list[dict[str, Any]], overall: bool = True):
    """Each set's conditions: one per SNR where there are several (then, if `overall`, all SNRs)."""
    for res in results:
        snrs = res["dataset"]["snrs"] or []
        groups = [f"snr={s:g}" for s in snrs] if snrs else ["all"]
        if overall and len(snrs) > 1:
            groups.append("all")
        for g in groups:
            yield res, g, condition_label(res["dataset"], g)


def render_markdown(results: list[dict[str, Any]]) -> str:
    lines = ["# Compositional two-segment diagnostic: results", ""]
    scoring = {res.get("scoring", "robust") for res in results}
    prompts = {res.get("prompts", "project") for res in results}
    lines += [f"Scoring: {', '.join(sorted(scoring))} (docs/compose.md); prompts: {', '.join(sorted(prompts))}.", ""]
    lines += ["Scores in percent. Strict = tag parser; lenient = rule-based parser (study scoring: the study's "
              "evaluators' own extraction). WER is corpus WER on normalised text (lower is better). Change = "
              "compositional minus atomic, in percentage points.", ""]
    for parser in results[0]["parsers"]:
        lines += [f"## Recognition, selection and composition ({parser} parser)", "",
                  "| condition | recognition | chance | selection | atomic | compositional | change (pp) | "
                  "change vs target (pp) | step-by-step | metric |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for res, g, label in _conditions(results):
            layers = res["layers"]
            get = lambda layer: (layers.get(layer, {}).get(parser, {}).get(g) or {})
            value = lambda m: m.get(m.get("metric", ""))
            gap = res.get("gap", {}).get("compositional", {}).get(parser, {}).get(g, {})
            lines.append(
                f"| {label} | {_fmt(value(get('recognition')))} | {_fmt(res['chance']['recognition'])} | "
                f"{_fmt(value(get('selection')))} | {_fmt(value(get('atomic')))} | "
                f"{_fmt(value(get('compositional')))} | {_fmt(gap.get('change_pp'))} | "
                f"{_fmt(gap.get('change_vs_target_pp'))} | "
                f"{_fmt(value(get('compositional_cot')))} | {get('compositional').get('metric', get('atomic').get('metric', '–'))} |")
        lines.append("")
    lines += ["## Error classes (lenient parser)", "",
              "| condition | layer | correct | distractor | both | neither |", "|---|---|---|---|---|---|"]
    for res, g, label in _conditions(results):
        for layer in ("selection", "compositional", "compositional_cot"):
            m = res["layers"].get(layer, {}).get("lenient", {}).get(g, {})
            ec = m.get("error_classes")
            if ec:
                lines.append(f"| {label} | {layer} | {_fmt(ec['correct'])} | {_fmt(ec['distractor'])} | "
                             f"{_fmt(ec.get('both'))} | {_fmt(ec['neither'])} |")
    lines += ["", "## Position bias (selection, lenient parser)", "",
              "| condition | P(choose 1) | balanced acc. | d' | c | valid / n |", "|---|---|---|---|---|---|"]
    for res, g, label in _conditions(results):
        pos = res["layers"].get("selection", {}).get("lenient", {}).get(g, {}).get("position")
        if pos:
            lines.append(f"| {label} | {_fmt(_pct(pos['p_choose_first']))} | {_fmt(_pct(pos['balanced_accuracy']))} | "
                         f"{_fmt(pos['d_prime'], 2)} | {_fmt(pos['criterion_c'], 2)} | {pos['n_valid']} / {pos['n']} |")
    lines += ["", "## Format compliance (strict tag found, %) and parser gap (lenient − strict, pp)", "",
              "| set | layer | tags | lenient − strict |", "|---|---|---|---|"]
    for res in results:
        label = condition_label(res["dataset"], "all")
        for layer, tags in res["format_compliance"].items():
            tag_text = ", ".join(f"`{t}` {_fmt(v)}" for t, v in tags.items())
            lines.append(f"| {label} | {layer} | {tag_text} | {_fmt(res['parser_gap_pp'][layer]['all'])} |")
    lines += ["", "Figures: `recognition_selection.png`, `atomic_compositional.png`, `position_bias.png`.", ""]
    return "\n".join(lines)


def _pct(v: float | None) -> float | None:
    return None if v is None else 100.0 * v


def _save(fig, path: Path) -> None:
    # `path` lies in the staged folder of `output_directory`, renamed into place only when whole
    fig.savefig(path, dpi=120)


def plot_figures(results: list[dict[str, Any]], out: Path, parser: str = "lenient") -> list[str]:
    require("matplotlib", "figures", "compose's figures")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    conds = list(_conditions(results, overall=False))
    labels = [c[2] for c in conds]
    x = np.arange(len(conds))
    files = []

    def val(res, layer, g):
        m = res["layers"].get(layer, {}).get(parser, {}).get(g) or {}
        v = m.get(m.get("metric", ""))
        return np.nan if v is None else v

    fig, ax = plt.subplots(figsize=(max(5, 1.3 * len(conds) + 2), 4))
    ax.bar(x - 0.2, [val(r, "recognition", g) for r, g, _ in conds], 0.4, label="recognition")
    ax.bar(x + 0.2, [val(r, "selection", g) for r, g, _ in conds], 0.4, label="selection")
    for i, (r, _, _) in enumerate(conds):
        ax.hlines(r["chance"]["recognition"], i - 0.4, i, colors="k", linestyles=":")
        ax.hlines(50, i, i + 0.4, colors="k", linestyles=":")
    ax.set_xticks(x, labels, rotation=30, ha="right")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_title("Cue recognition vs segment selection (dotted: chance)")
    ax.legend()
    fig.tight_layout()
    _save(fig, out / "recognition_selection.png")
    plt.close(fig)
    files.append("recognition_selection.png")

    fig, ax = plt.subplots(figsize=(max(5, 1.3 * len(conds) + 2), 4))
    ax.bar(x - 0.2, [val(r, "atomic", g) for r, g, _ in conds], 0.4, label="atomic (both segments)")
    ax.bar(x + 0.2, [val(r, "compositional", g) for r, g, _ in conds], 0.4, label="compositional")
    ax.set_xticks(x, labels, rotation=30, ha="right")
    ax.set_ylabel("accuracy or WER (%)")
    ax.set_title("Atomic vs compositional downstream (WER for transcription)")
    ax.legend()
    fig.tight_layout()
    _save(fig, out / "atomic_compositional.png")
    plt.close(fig)
    files.append("atomic_compositional.png")

    fig, ax = plt.subplots(figsize=(max(5, 1.3 * len(conds) + 2), 4))
    pf = []
    for r, g, _ in conds:
        pos = (r["layers"].get("selection", {}).get(parser, {}).get(g) or {}).get("position") or {}
        pf.append(np.nan if pos.get("p_choose_first") is None else 100 * pos["p_choose_first"])
    ax.bar(x, pf, 0.5, color="tab:purple")
    ax.axhline(50, color="k", linestyle=":")
    ax.set_xticks(x, labels, rotation=30, ha="right")
    ax.set_ylabel("P(choose segment 1) (%)")
    ax.set_ylim(0, 100)
    ax.set_title("Position bias in segment selection (dotted: no bias)")
    fig.tight_layout()
    _save(fig, out / "position_bias.png")
    plt.close(fig)
    files.append("position_bias.png")
    return files


def write_report(results: list[dict[str, Any]], out: str | Path) -> Path:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    samples = [dict(row, set=res["dataset"]["path"]) for res in results for row in res.get("_samples", [])]
    results = [{k: v for k, v in res.items() if k != "_samples"} for res in results]
    write_jsonl_atomic(out / "samples.jsonl", samples)
    write_text_atomic(out / "results.json", json.dumps({"datasets": results}, indent=2, sort_keys=True) + "\n")
    write_text_atomic(out / "report.md", render_markdown(results))
    plot_figures(results, out)
    return out
