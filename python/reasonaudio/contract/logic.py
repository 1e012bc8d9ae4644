"""The contract's query logic (§2) read literally: JSON -> a flat conjunction of constraints, and
which constraint kinds each task may use. Independent of the Rust engine, whose reading the
validator checks against this one."""

from __future__ import annotations

from reasonaudio.errors import LogicError

import json
import math
from dataclasses import dataclass
from typing import Any

from reasonaudio.contract import TASKS


@dataclass(frozen=True)
class Constraint:
    kind: str  # has | not | before | overlap | duration
    labels: tuple[str, ...]
    min_s: float | None = None
    max_s: float | None = None

    @property
    def positive_labels(self) -> tuple[str, ...]:
        """Labels a relevant clip must contain (§3.2: has, before, overlap, duration)."""
        return () if self.kind == "not" else self.labels

    def __str__(self) -> str:
        if self.kind in ("has", "not"):
            return f"{self.kind} {self.labels[0]}"
        if self.kind in ("before", "overlap"):
            return f"{self.labels[0]} {self.kind} {self.labels[1]}"
        bounds = []
        if self.min_s is not None:
            bounds.append(f">= {self.min_s:g} s")
        if self.max_s is not None:
            bounds.append(f"<= {self.max_s:g} s")
        return f"duration({self.labels[0]}) {' and '.join(bounds)}"




def parse_logic(text: str) -> list[Constraint]:
    """Parse a §2 logic JSON string into a flat conjunction of constraints."""
    try:
        node = json.loads(text)
    except (json.JSONDecodeError, TypeError) as err:
        raise LogicError(f"not valid JSON ({err})") from None
    constraints: list[Constraint] = []
    _flatten(node, constraints)
    if not constraints:
        raise LogicError("empty conjunction")
    return constraints


def _label(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise LogicError(f"{where}: expected a label string, got {value!r}")
    return value


def _seconds(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise LogicError(f"{where}: expected a non-negative number of seconds, got {value!r}")
    return float(value)


def _flatten(node: Any, out: list[Constraint], where: str = "") -> None:
    try:
        _flatten_one(node, out, where)
    except LogicError as err:
        if where and not str(err).startswith("constraint "):
            raise LogicError(f"{where}: {err}") from None
        raise


def _flatten_one(node: Any, out: list[Constraint], where: str) -> None:
    if not isinstance(node, dict) or len(node) != 1:
        raise LogicError(f"expected an object with exactly one key, got {json.dumps(node)[:80]}")
    (kind, arg), = node.items()
    if kind == "all":
        if not isinstance(arg, list):
            raise LogicError(f"'all' expects a list, got {json.dumps(arg)[:80]}")
        for index, child in enumerate(arg):
            _flatten(child, out, f"constraint {index}" if not where else f"{where}.{index}")
    elif kind in ("has", "not"):
        out.append(Constraint(kind, (_label(arg, kind),)))
    elif kind in ("before", "overlap"):
        if not isinstance(arg, list) or len(arg) != 2:
            raise LogicError(f"'{kind}' expects [A, B], got {json.dumps(arg)[:80]}")
        out.append(Constraint(kind, (_label(arg[0], kind), _label(arg[1], kind))))
    elif kind == "duration":
        if not isinstance(arg, dict) or "label" not in arg:
            raise LogicError(f"'duration' expects {{label, min_s?, max_s?}}, got {json.dumps(arg)[:80]}")
        unknown = set(arg) - {"label", "min_s", "max_s"}
        if unknown:
            raise LogicError(f"'duration' has unknown key(s) {sorted(unknown)}")
        min_s = _seconds(arg["min_s"], "duration.min_s") if arg.get("min_s") is not None else None
        max_s = _seconds(arg["max_s"], "duration.max_s") if arg.get("max_s") is not None else None
        if min_s is None and max_s is None:
            raise LogicError("'duration' needs min_s or max_s")
        if min_s is not None and max_s is not None and min_s > max_s:
            raise LogicError(f"'duration' min_s {min_s} > max_s {max_s}")
        out.append(Constraint("duration", (_label(arg["label"], "duration.label"),), min_s, max_s))
    else:
        raise LogicError(f"unknown constraint {kind!r} (expected all/has/not/before/overlap/duration)")


def task_shape_problem(task: str, constraints: list[Constraint]) -> str | None:
    """Why `constraints` do not fit `task` (§2 task shapes), or None.

    Each task must test its own kind of reasoning; a redundant `has` is tolerated everywhere, any other
    mixture of kinds belongs to `mix`.
    """
    kinds = [c.kind for c in constraints]
    kind_set = set(kinds)
    if task == "negation":
        if "not" not in kind_set or "has" not in kind_set:
            return "negation needs a `has` and a `not`"
        if kind_set - {"has", "not"}:
            return f"negation may only use has/not, found {sorted(kind_set - {'has', 'not'})}"
    elif task == "order":
        if "before" not in kind_set:
            return "order needs a `before`"
        if kind_set - {"before", "has"}:
            return f"order may only use before/has, found {sorted(kind_set - {'before', 'has'})}"
    elif task == "overlap":
        if "overlap" not in kind_set:
            return "overlap needs an `overlap`"
        if kind_set - {"overlap", "has"}:
            return f"overlap may only use overlap/has, found {sorted(kind_set - {'overlap', 'has'})}"
    elif task == "duration":
        if kinds.count("duration") != 1:
            return f"duration needs exactly one duration bound, found {kinds.count('duration')}"
        if kind_set - {"duration", "has"}:
            return f"duration may only use duration/has, found {sorted(kind_set - {'duration', 'has'})}"
    elif task == "mix":
        if not 2 <= len(constraints) <= 3:
            return f"mix needs two or three constraints, found {len(constraints)}"
        if len(kind_set) < 2:
            return f"mix needs constraints of different kinds, found only {kinds[0]}"
    else:
        return f"unknown task {task!r} (expected one of {', '.join(TASKS)})"
    return None


# --------------------------------------------------------------------------------------- evaluation


def positive_labels(constraints: list[Constraint]) -> list[str]:
    """Distinct labels mentioned positively (has, before, overlap, duration), in order of first
    mention: a hard negative must contain all of them (§3.2)."""
    out: list[str] = []
    for c in constraints:
        out.extend(label for label in c.positive_labels if label not in out)
    return out
