"""Look at one clip or one query of a benchmark directory: timelines, relevance, two-option pair.

Text: `describe(path, id)`. Figures: `plot(path, id, png)` draws a clip's spectrogram over its event
timeline, or a query's two-option pair side by side. Works from the on-disk layout (contract §4) only.

(The module is `reasonaudio.audit.inspect`; inside the package it never shadows the standard library's
`inspect`, which absolute imports still resolve.)
"""

from __future__ import annotations

import difflib
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from reasonaudio.errors import UserError, require
from reasonaudio.io.outputs import check_file, check_not_an_input, png_kind, png_metadata, write_output
from reasonaudio.contract.logic import LogicError, parse_logic
from reasonaudio.contract.reference import EventIndex
from reasonaudio.validate import Tables, open_benchmark

FIGURE = png_kind("inspect figure")

TIMELINE_WIDTH = 48
MAX_LISTED_QUERIES = 20


@dataclass
class ClipView:
    clip_id: str
    path: str
    pattern: str
    duration_s: float
    events: pl.DataFrame  # event_index, label, phrase, onset_s, offset_s, duration_s, gain_db (by onset)


def _clip_view(t: Tables, clip_id: str) -> ClipView:
    rows = t["clips"].filter(pl.col("clip_id") == clip_id)
    if rows.height == 0:
        raise UserError(f"{t.root / 'clips.parquet'}: no clip {clip_id!r} (named by mc.parquet or qrels.parquet)")
    row = rows.row(0, named=True)
    sr = t.sample_rate
    phrases = t["atoms"].select("atom_id", "phrase")
    events = (
        t["events"]
        .filter(pl.col("clip_id") == clip_id)
        .join(phrases, on="atom_id", how="left")
        .select(
            "event_index",
            "label",
            pl.col("phrase").fill_null("?"),
            (pl.col("onset_sample") / sr).alias("onset_s"),
            (pl.col("offset_sample") / sr).alias("offset_s"),
            ((pl.col("offset_sample") - pl.col("onset_sample")) / sr).alias("duration_s"),
            pl.col("gain_db").cast(pl.Float64),
        )
        .sort("onset_s", "event_index")
    )
    return ClipView(clip_id, row["path"], row["pattern"], float(row["duration_s"]), events)


def _bar(onset_s: float, offset_s: float, total_s: float, width: int = TIMELINE_WIDTH) -> str:
    """ASCII bar: '=' where the event sounds, '.' elsewhere; an event never vanishes to zero width."""
    if total_s <= 0:
        return "." * width
    a = int(np.floor(onset_s / total_s * width))
    b = int(np.ceil(offset_s / total_s * width))
    a, b = max(0, min(a, width - 1)), max(1, min(b, width))
    b = max(b, a + 1)
    return "." * a + "=" * (b - a) + "." * (width - b)


def format_timeline(view: ClipView, indent: str = "  ") -> str:
    end = f"{view.duration_s:g}s"
    scale = "0" + end.rjust(TIMELINE_WIDTH - 1)
    header = f"{indent}{'label':<16} {'phrase':<24} {'onset':>7} {'offset':>7} {'dur':>6} {'gain':>8}  |{scale}|"
    lines = [header]
    for e in view.events.iter_rows(named=True):
        lines.append(
            f"{indent}{e['label'][:16]:<16} {e['phrase'][:24]:<24} {e['onset_s']:7.3f} {e['offset_s']:7.3f} "
            f"{e['duration_s']:6.3f} {e['gain_db']:+6.1f}dB  |{_bar(e['onset_s'], e['offset_s'], view.duration_s)}|"
        )
    return "\n".join(lines)


def _clip_header(view: ClipView) -> str:
    return f"clip {view.clip_id}  {view.pattern}, {view.duration_s:g} s, {view.events.height} events  ({view.path})"


def _pretty_logic(logic: str) -> str:
    try:
        return " AND ".join(str(c) for c in parse_logic(logic))
    except LogicError as err:
        return f"(unparsable: {err}) {logic}"


def _unknown_id(t: Tables, item: str) -> UserError:
    clip_ids = t["clips"]["clip_id"].to_list()
    query_ids = t["queries"]["query_id"].to_list()
    close = difflib.get_close_matches(item, clip_ids + query_ids, n=5, cutoff=0.6)
    if close:
        hint = f"close matches: {', '.join(close)}"
    else:
        hint = f"clip ids look like {', '.join(clip_ids[:2])}; query ids like {', '.join(query_ids[:2])}"
    return UserError(f"{t.root}: no clip or query with id {item!r} ({hint})")


def _kind_of(t: Tables, item: str) -> str:
    if t["clips"].filter(pl.col("clip_id") == item).height:
        return "clip"
    if t["queries"].filter(pl.col("query_id") == item).height:
        return "query"
    raise _unknown_id(t, item)


def describe_clip(t: Tables, clip_id: str) -> str:
    view = _clip_view(t, clip_id)
    lines = [_clip_header(view), format_timeline(view)]
    relevant = (
        t["qrels"].filter((pl.col("clip_id") == clip_id) & (pl.col("relevance") > 0)).join(t["queries"], on="query_id", how="left").sort("query_id")
    )
    lines.append(f"relevant to {relevant.height} quer{'y' if relevant.height == 1 else 'ies'}:")
    for q in relevant.head(MAX_LISTED_QUERIES).iter_rows(named=True):
        lines.append(f"  {q['query_id']}  [{q['task']}] {q['text']}")
    if relevant.height > MAX_LISTED_QUERIES:
        lines.append(f"  ... and {relevant.height - MAX_LISTED_QUERIES} more")
    in_mc = t["mc"].filter((pl.col("positive_clip_id") == clip_id) | (pl.col("negative_clip_id") == clip_id))
    for m in in_mc.iter_rows(named=True):
        role = "positive" if m["positive_clip_id"] == clip_id else "hard negative"
        lines.append(f"two-option pair of {m['query_id']}: {role}")
    return "\n".join(lines)


def _hard_negatives(t: Tables, logic: str, relevant_ids: set[str]) -> list[str]:
    """Clips containing every positively mentioned label that are not relevant (§3.2), by clip order."""
    try:
        constraints = parse_logic(logic)
    except LogicError:
        return []
    clip_ids = t["clips"]["clip_id"].to_list()
    index = EventIndex(t["events"], clip_ids, t.sample_rate)
    candidate = np.ones(len(clip_ids), dtype=bool)
    for label in {l for c in constraints for l in c.positive_labels}:
        candidate &= index.present(label)
    return [clip_ids[i] for i in np.flatnonzero(candidate) if clip_ids[i] not in relevant_ids]


def describe_query(t: Tables, query_id: str, n_examples: int = 3) -> str:
    q = t["queries"].filter(pl.col("query_id") == query_id).row(0, named=True)
    relevant = t["qrels"].filter((pl.col("query_id") == query_id) & (pl.col("relevance") > 0))["clip_id"].sort().to_list()
    hard = _hard_negatives(t, q["logic"], set(relevant))
    n_clips = t["clips"].height
    lines = [
        f"query {query_id}  task {q['task']}",
        f"  text:  {q['text']}",
        f"  logic: {_pretty_logic(q['logic'])}",
        f"  relevant: {len(relevant)} of {n_clips} clips; hard negatives: {len(hard)}",
    ]
    pair = t["mc"].filter(pl.col("query_id") == query_id)
    if pair.height:
        p = pair.row(0, named=True)
        lines.append(f"  two-option pair: positive {p['positive_clip_id']}, hard negative {p['negative_clip_id']}")
        # the pair's clips lead their lists, so the first examples shown are the two-option pair
        relevant = sorted(relevant, key=lambda c: c != p["positive_clip_id"])
        hard = sorted(hard, key=lambda c: c != p["negative_clip_id"])
    else:
        lines.append("  two-option pair: none in mc.parquet")
    for title, ids in (("positives", relevant), ("hard negatives", hard)):
        shown = ids[:n_examples]
        lines.append(f"{title} (first {len(shown)} of {len(ids)}):" if ids else f"{title}: none")
        for clip_id in shown:
            view = _clip_view(t, clip_id)
            lines.append("  " + _clip_header(view))
            lines.append(format_timeline(view, indent="    "))
    return "\n".join(lines)


def describe(path: str | Path, item: str, n_examples: int = 3) -> str:
    """Text view of a clip id or a query id; an unknown id is a UserError listing close matches."""
    t = open_benchmark(path)
    return describe_clip(t, item) if _kind_of(t, item) == "clip" else describe_query(t, item, n_examples)


# ------------------------------------------------------------------------------------------ figures


def _load_audio(t: Tables, view: ClipView) -> np.ndarray:
    from reasonaudio.io.audio import read_audio

    path = t.root / view.path
    x, _ = read_audio(path, f"{path} (clip {view.clip_id})")
    return x[:, 0]


def _spectrogram_db(x: np.ndarray, sr: int, n_fft: int, hop: int) -> np.ndarray:
    """Power spectrogram in dB re full scale, floored 80 dB below full scale (silence stays dark)."""
    if x.size < n_fft:
        x = np.pad(x, (0, n_fft - x.size))
    frames = np.lib.stride_tricks.sliding_window_view(x, n_fft)[::hop]
    window = np.hanning(n_fft).astype(np.float32)
    spectrum = np.abs(np.fft.rfft(frames * window, axis=1)) ** 2 / (window.sum() ** 2 / 4)
    return 10 * np.log10(np.maximum(spectrum.T, 1e-8))


def _label_colors(views: list[ClipView]) -> dict[str, tuple]:
    """One colour per label across every panel of a figure, so a label looks the same in both clips."""
    require("matplotlib", "figures", "inspect's figure")
    from matplotlib import colormaps

    palette = colormaps["tab10" if len({l for v in views for l in v.events["label"]}) <= 10 else "tab20"]
    colors: dict[str, tuple] = {}
    for view in views:
        for label in view.events["label"].to_list():
            colors.setdefault(label, palette(len(colors) % palette.N))
    return colors


def _draw_clip(t: Tables, view: ClipView, ax_spec, ax_time, title: str, colors: dict[str, tuple]) -> None:
    sr = t.sample_rate
    x = _load_audio(t, view)
    n_fft = 1 << max(6, int(np.log2(sr * 0.032)))
    spec = _spectrogram_db(x, sr, n_fft, n_fft // 4)
    ax_spec.imshow(
        spec, origin="lower", aspect="auto", cmap="magma", vmin=-80, vmax=0,
        extent=(0, x.size / sr, 0, sr / 2000), interpolation="nearest",
    )
    ax_spec.set_ylabel("kHz")
    ax_spec.set_title(title, fontsize=10, loc="left")
    labels = view.events["label"].to_list()
    for row, e in enumerate(view.events.iter_rows(named=True)):
        color = colors[e["label"]]
        y = len(labels) - 1 - row  # first event on top, as in the text timeline
        ax_time.broken_barh([(e["onset_s"], e["duration_s"])], (y - 0.4, 0.8), facecolors=color, edgecolor="black", linewidth=0.5)
        ax_time.text(e["onset_s"] + 0.05, y, f"{e['label']}  {e['duration_s']:.2f}s", va="center", ha="left", fontsize=8, color="black",
                     bbox={"facecolor": "white", "alpha": 0.7, "pad": 1, "edgecolor": "none"})
        for edge in (e["onset_s"], e["offset_s"]):
            ax_spec.axvline(edge, color=color, linewidth=0.8, alpha=0.8, linestyle="--")
    ax_time.set_ylim(-0.6, max(len(labels), 1) - 0.4)
    ax_time.set_yticks([])
    ax_time.set_xlim(0, max(view.duration_s, x.size / sr))
    ax_time.set_xlabel("time (s)")
    ax_time.grid(axis="x", alpha=0.3)


def _save(fig, out: Path, bench: Path, force: bool) -> None:
    """Drawn in memory, then written whole by the output discipline, so a failed draw never leaves a
    half-written PNG (and the file gets the mode a plain open gives)."""
    buf = io.BytesIO()
    fig.savefig(buf, dpi=120, format="png", metadata=png_metadata(FIGURE))
    write_output(out, FIGURE, buf.getvalue(), inputs=[bench], force=force, option="--png")


def plot(path: str | Path, item: str, out: str | Path, *, force: bool = False) -> Path:
    """PNG of a clip (spectrogram over its event timeline) or of a query's two-option pair; an
    existing `out` is replaced only when it is an earlier such figure and `force` is given."""
    require("matplotlib", "figures", "inspect --png")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    check_not_an_input(out, [path], "--png")  # before drawing; claimed again when written
    check_file(out, FIGURE, force, "--png")
    t = open_benchmark(path)
    if _kind_of(t, item) == "clip":
        views = [_clip_view(t, item)]
        roles = [f"{item} — {views[0].pattern}, {views[0].events.height} events"]
        suptitle = None
    else:
        q = t["queries"].filter(pl.col("query_id") == item).row(0, named=True)
        pair = t["mc"].filter(pl.col("query_id") == item)
        if pair.height == 0:
            raise UserError(f"{t.root / 'mc.parquet'}: no two-option pair for query {item}")
        p = pair.row(0, named=True)
        views = [_clip_view(t, p["positive_clip_id"]), _clip_view(t, p["negative_clip_id"])]
        roles = [f"positive (relevant): {views[0].clip_id}", f"hard negative: {views[1].clip_id}"]
        suptitle = f"{item} [{q['task']}] “{q['text']}”\n{_pretty_logic(q['logic'])}"
    n_rows = max(v.events.height for v in views)
    fig, axes = plt.subplots(
        2, len(views), figsize=(4 + 5 * len(views), 4 + 0.3 * n_rows + (0.6 if suptitle else 0)), sharex="col", squeeze=False,
        gridspec_kw={"height_ratios": [3, 0.6 + 0.35 * n_rows]}, constrained_layout=True,
    )
    try:
        colors = _label_colors(views)
        for col, (view, role) in enumerate(zip(views, roles)):
            _draw_clip(t, view, axes[0, col], axes[1, col], role, colors)
        if suptitle:
            fig.suptitle(suptitle, fontsize=11)
        _save(fig, out, Path(path), force)
    finally:
        plt.close(fig)
    return out

