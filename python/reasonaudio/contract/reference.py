"""A reference evaluator of §2, written from the contract and independent of the Rust engine.

`holds` reads the contract's table literally for one clip (the tests' and benches' reference);
`EventIndex` evaluates the same rules over a whole events table with numpy and also bounds each
decision under the §3.1 margin (what the validator needs)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from reasonaudio.contract.logic import Constraint


def is_before(x_offset: int, y_onset: int) -> bool:
    """§2 `before`: event x ends no later than event y starts."""
    return x_offset <= y_onset


def overlaps(x_onset: int, x_offset: int, y_onset: int, y_offset: int) -> bool:
    """§2 `overlap`: the two events share a positive stretch of time."""
    return min(x_offset, y_offset) - max(x_onset, y_onset) > 0


def holds(events: list[dict[str, Any]], logic: dict, sample_rate: float) -> bool:
    """Whether a clip with `events` ({label, onset, offset} in samples) satisfies `logic`, the
    contract's table read literally."""

    def E(label: str) -> list[dict[str, Any]]:
        return [x for x in events if x["label"] == label]

    def dur(x: dict[str, Any]) -> float:
        return (x["offset"] - x["onset"]) / sample_rate

    def one(constraint: dict) -> bool:
        ((kind, arg),) = constraint.items()
        if kind == "has":
            return len(E(arg)) > 0
        if kind == "not":
            return len(E(arg)) == 0
        if kind == "before":
            A, B = arg
            return any(is_before(x["offset"], y["onset"]) for x in E(A) for y in E(B))
        if kind == "overlap":
            A, B = arg
            return any(overlaps(x["onset"], x["offset"], y["onset"], y["offset"]) for x in E(A) for y in E(B))
        if kind == "duration":
            min_s, max_s = arg.get("min_s"), arg.get("max_s")
            return any((min_s is None or dur(x) >= min_s) and (max_s is None or dur(x) <= max_s) for x in E(arg["label"]))
        if kind == "all":
            return all(one(c) for c in arg)
        raise ValueError(f"unknown constraint kind {kind!r}")

    return one(logic)


@dataclass
class Truth:
    """Per-clip truth of a constraint or query: nominal, and its bounds under the margin."""

    nominal: np.ndarray  # bool[n_clips]
    robust: np.ndarray  # holds under every perturbation of onsets/offsets by up to m
    possible: np.ndarray  # holds under some perturbation

    def __and__(self, other: "Truth") -> "Truth":
        return Truth(self.nominal & other.nominal, self.robust & other.robust, self.possible & other.possible)


class EventIndex:
    """The events table as per-label numpy columns over clip positions, for vectorised §2 evaluation."""

    def __init__(self, events: pl.DataFrame, clip_ids: list[str] | pl.Series, sample_rate: int) -> None:
        self.n_clips = len(clip_ids)
        self.sample_rate = sample_rate
        ids = clip_ids if isinstance(clip_ids, pl.Series) else pl.Series(clip_ids, dtype=pl.String)
        # ids of either kind, strings or categoricals (the validator's), join with the events' kind
        position = pl.DataFrame({"clip_id": ids.cast(events.schema["clip_id"]), "clip": np.arange(self.n_clips, dtype=np.int64)})
        # each event's clip position (an id listed twice places its events at both) by a join of the
        # ids alone; the times are then gathered once, grouped by label, in numpy: a join and a
        # partition of the whole frame would hold three copies of the events at once
        located = events.select("clip_id").with_row_index("_e").join(position, on="clip_id", how="inner", maintain_order="left")
        row = located["_e"].to_numpy()
        clip = located["clip"].to_numpy()
        del located
        label = events["label"]
        if not isinstance(label.dtype, pl.Categorical):
            label = label.cast(pl.String).cast(pl.Categorical)
        by = np.argsort(label.to_physical().to_numpy()[row], kind="stable")
        row, clip = row[by], clip[by]
        del by
        code = label.to_physical().to_numpy()[row]
        starts = np.flatnonzero(np.r_[True, code[1:] != code[:-1]]) if row.size else np.zeros(0, np.int64)
        names = label.gather(row[starts]).cast(pl.String).to_list()
        bounds = np.r_[starts, row.size]
        on = events["onset_sample"].cast(pl.Int64).to_numpy()[row]
        off = events["offset_sample"].cast(pl.Int64).to_numpy()[row]
        self.by_label: dict[str, pl.DataFrame] = {
            name: pl.DataFrame({"clip": clip[lo:hi], "on": on[lo:hi], "off": off[lo:hi]}, schema={"clip": pl.Int64, "on": pl.Int64, "off": pl.Int64})
            for name, lo, hi in zip(names, bounds[:-1], bounds[1:])
        }
        self._present: OrderedDict[str, np.ndarray] = OrderedDict()
        self._empty = pl.DataFrame(schema={"clip": pl.Int64, "on": pl.Int64, "off": pl.Int64})

    def events(self, label: str) -> pl.DataFrame:
        return self.by_label.get(label, self._empty)

    #: How many labels' `present` masks are kept: a mask takes a byte a clip (1 MB at a million
    #: clips, hundreds of MB for every label), and a query asks again only for its own few labels.
    PRESENT_KEPT = 32

    def present(self, label: str) -> np.ndarray:
        mask = self._present.get(label)
        if mask is not None:
            self._present.move_to_end(label)
            return mask
        mask = np.zeros(self.n_clips, dtype=bool)
        mask[self.events(label)["clip"].to_numpy()] = True
        self._present[label] = mask
        if len(self._present) > self.PRESENT_KEPT:
            self._present.popitem(last=False)
        return mask

    def _any_by_clip(self, clips: np.ndarray, per_pair: np.ndarray) -> np.ndarray:
        mask = np.zeros(self.n_clips, dtype=bool)
        mask[clips[per_pair]] = True
        return mask

    def pairs(self, a: str, b: str) -> pl.DataFrame:
        """Every (x in E_a, y in E_b) in the same clip: clip, on_x, off_x, on_y, off_y."""
        return self.events(a).join(self.events(b), on="clip", how="inner", suffix="_y").rename({"on": "on_x", "off": "off_x"})

    def truth(self, c: Constraint, slack: float) -> Truth:
        """Evaluate one constraint; `slack` = 2m in samples (how far a decision quantity can move)."""
        if c.kind in ("has", "not"):
            present = self.present(c.labels[0])
            value = present if c.kind == "has" else ~present
            return Truth(value, value, value)
        if c.kind in ("before", "overlap"):
            pairs = self.pairs(*c.labels)
            clips = pairs["clip"].to_numpy()
            if c.kind == "before":
                # x.offset <= y.onset; the gap y.on - x.off moves by at most 2m
                gap = (pairs["on_y"] - pairs["off_x"]).to_numpy().astype(np.float64)
                holds = lambda shift: gap + shift >= 0  # noqa: E731
            else:
                # min(off) - max(on) > 0; moves by at most 2m (offs by m one way, ons by m the other)
                common = (
                    np.minimum(pairs["off_x"].to_numpy(), pairs["off_y"].to_numpy())
                    - np.maximum(pairs["on_x"].to_numpy(), pairs["on_y"].to_numpy())
                ).astype(np.float64)
                holds = lambda shift: common + shift > 0  # noqa: E731
            return Truth(
                self._any_by_clip(clips, holds(0.0)),
                self._any_by_clip(clips, holds(-slack)),
                self._any_by_clip(clips, holds(+slack)),
            )
        if c.kind == "duration":
            ev = self.events(c.labels[0])
            clips = ev["clip"].to_numpy()
            dur = (ev["off"] - ev["on"]).to_numpy().astype(np.float64)
            lo = -np.inf if c.min_s is None else c.min_s * self.sample_rate
            hi = np.inf if c.max_s is None else c.max_s * self.sample_rate
            return Truth(
                self._any_by_clip(clips, (dur >= lo) & (dur <= hi)),
                self._any_by_clip(clips, (dur - slack >= lo) & (dur + slack <= hi)),
                self._any_by_clip(clips, (dur + slack >= lo) & (dur - slack <= hi)),
            )
        raise ValueError(f"unknown constraint kind {c.kind}")

    def evaluate(self, constraints: list[Constraint], slack: float = 0.0) -> Truth:
        result: Truth | None = None
        for c in constraints:
            t = self.truth(c, slack)
            result = t if result is None else result & t
        assert result is not None
        return result

    def relevant(self, constraints: list[Constraint]) -> np.ndarray:
        return self.evaluate(constraints).nominal

    def explain(self, c: Constraint, clip: int) -> str:
        """The decision quantity of `c` in one clip, in seconds (for examples)."""
        sr = self.sample_rate
        if c.kind in ("before", "overlap"):
            pairs = self.pairs(*c.labels).filter(pl.col("clip") == clip)
            if pairs.height == 0:
                return f"{c}: labels absent"
            r = pairs.row(0, named=True)
            if c.kind == "before":
                return f"{c}: gap {c.labels[0]}.offset -> {c.labels[1]}.onset = {(r['on_y'] - r['off_x']) / sr:.3f} s"
            common = min(r["off_x"], r["off_y"]) - max(r["on_x"], r["on_y"])
            return f"{c}: common time = {common / sr:.3f} s"
        if c.kind == "duration":
            ev = self.events(c.labels[0]).filter(pl.col("clip") == clip)
            durs = ", ".join(f"{(r['off'] - r['on']) / sr:.3f} s" for r in ev.iter_rows(named=True))
            return f"{c}: {c.labels[0]} lasts {durs}"
        return str(c)


def summary_stats(values: np.ndarray) -> dict:
    """The manifest's summary of a per-query or per-clip quantity: min, median (p50), mean and max,
    rounded to 4 places ({} for none). The build writes it and the validator recomputes it."""
    if len(values) == 0:
        return {}
    return {
        "min": round(float(values.min()), 4),
        "p50": round(float(np.median(values)), 4),
        "mean": round(float(values.mean()), 4),
        "max": round(float(values.max()), 4),
    }
