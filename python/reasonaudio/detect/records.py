"""A detector's records of what it was trained on (`LibraryRecord`) and how (`TrainingRecord`).

Both are typed parts of the model file: `from_dict` reads one from the file's dict (after
`model.migrate`) and checks every field, so a missing or wrong-typed field is one line naming the
file and the field; `to_dict` gives the file's dict back, field for field, in the file's order.
The nested reports (the training config, the validation figures, the checks) stay tables: they
are figures for the reader, not settings the code acts on.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from reasonaudio.errors import UserError


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_texts(v) -> bool:
    return isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v)


#: what a field may hold: a name, its test, and the words of the error
KINDS = {
    "text": (lambda v: isinstance(v, str), "a string"),
    "texts": (_is_texts, "a list of strings"),
    "count": (_is_int, "an integer"),
    "number": (lambda v: _is_int(v) or isinstance(v, float), "a number"),
    "flag": (lambda v: isinstance(v, bool), "true or false"),
    "table": (lambda v: isinstance(v, dict), "a table"),
    "tables": (lambda v: isinstance(v, (list, tuple)) and all(isinstance(x, dict) for x in v), "a list of tables"),
    "none": (lambda v: v is None, "none"),
}


def _kind(*kinds: str, default: Any = None, omitted: bool = False):
    """A record field holding one of `kinds`; `omitted`: absent from the file when it equals
    `default` (the fields a later stage adds)."""
    meta = {"kinds": kinds, "omitted": omitted}
    return field(default=default, metadata=meta) if omitted else field(metadata=meta)


def _read(cls, d, path, where: str):
    """An instance of the record class `cls` from the file's dict `d`, every field checked."""
    if not isinstance(d, dict):
        raise UserError(f"{path}: model file field {where}: expected a table, found {type(d).__name__}")
    names = {f.name for f in fields(cls)}
    unknown = [k for k in d if k not in names]
    if unknown:
        raise UserError(f"{path}: model file field {where}.{unknown[0]}: not a field of this format (a damaged or foreign model file)")
    values = {}
    for f in fields(cls):
        kinds, omitted = f.metadata["kinds"], f.metadata["omitted"]
        if f.name not in d:
            if omitted:
                continue
            raise UserError(f"{path}: model file field {where}.{f.name} is missing")
        v = d[f.name]
        if not any(KINDS[k][0](v) for k in kinds):
            expected = " or ".join(KINDS[k][1] for k in kinds)
            raise UserError(f"{path}: model file field {where}.{f.name}: expected {expected}, found {type(v).__name__} {_shown(v)}")
        values[f.name] = tuple(v) if isinstance(v, list) else v
    return cls(**values)


def _shown(v) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _write(record) -> dict:
    """The file's dict of a record: its fields in order (lists where the record holds tuples),
    without the omitted fields at their default."""
    out = {}
    for f in fields(record):
        v = getattr(record, f.name)
        if f.metadata["omitted"] and v == f.default:
            continue
        out[f.name] = list(v) if isinstance(v, tuple) else v
    return out


@dataclass(frozen=True)
class LibraryRecord:
    """The atom library (or libraries) a detector was trained on."""

    spec: str | tuple[str, ...] = _kind("text", "texts")  # as given to `detect train`; several: their list
    hash: str = _kind("text")  # detect.data.library_hash: what `trained_library` matches
    n_atoms: int = _kind("count")
    n_train_atoms: int | None = _kind("count", "none")  # None: not recorded (format 1)
    sample_rate: int = _kind("count")
    atom_ids: tuple[str, ...] = _kind("texts")
    label_atom_ids: tuple[str, ...] = _kind("texts")  # per trained label, its first exemplar's atom
    valid_atom_ids: tuple[str, ...] = _kind("texts")  # the recordings held out for validation
    exemplar_split: str | None = _kind("text", "none")  # "train": a library with a split trains on its train exemplars

    @classmethod
    def from_dict(cls, d, path: object = "model", where: str = "library") -> LibraryRecord:
        return _read(cls, d, path, where)

    def to_dict(self) -> dict:
        return _write(self)

    @property
    def given(self) -> str | list[str]:
        """The library as `detect train` was given it (a list for several), as results.json and messages show it."""
        return self.spec if isinstance(self.spec, str) else list(self.spec)


@dataclass(frozen=True)
class TrainingRecord:
    """How a detector was trained (detect.train) and which later stages it went through."""

    config: dict = _kind("table")  # TrainConfig.to_dict()
    steps_done: int = _kind("count")
    selected_step: int = _kind("count")  # the checkpoint kept (model selection on held-out recordings)
    clips_seen: int = _kind("count")
    audio_hours_seen: float = _kind("number")
    final_loss: float = _kind("number")
    valid_train_recordings: dict | None = _kind("table", "none")  # F1 on mixtures of training recordings
    valid_held_out_recordings: dict | None = _kind("table", "none")  # F1 on mixtures of held-out recordings
    held_out_recordings: str | None = _kind("text", "none")  # what "held out" means for this library
    checks: tuple[dict, ...] = _kind("tables")
    seeds: str = _kind("text")
    device: str = _kind("text")
    deterministic: bool = _kind("flag")
    #: a tagger of an ensemble other than the first (detect.ensemble)
    ensemble_member: bool = _kind("flag", default=False, omitted=True)
    #: the ensemble the first tagger heads: {"taggers": n, "seeds": [...]} (detect.ensemble)
    ensemble: dict | None = _kind("table", "none", omitted=True)
    recipe: str | None = _kind("text", "none", omitted=True)  # the recipe whose stages built the model

    @classmethod
    def from_dict(cls, d, path: object = "model", where: str = "training") -> TrainingRecord:
        return _read(cls, d, path, where)

    def to_dict(self) -> dict:
        return _write(self)
