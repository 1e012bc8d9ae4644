"""The one model registry: every `--model` spec and two-stage part, with what it needs.

Each adapter module declares its entries beside their loaders, as a module-level
``MODELS: tuple[ModelMeta, ...]`` (the pattern of mteb's ModelMeta): the spec name and form, the
paradigm, the study row it reproduces, the paper or card its recipe follows, what it needs to run
(GPU memory estimate, audio rate and window, packages and the extra that installs them), and whether
it embeds text only. Everything else derives from these entries, nothing keeps a list of its own:

- `load_model` / `parse_spec` (retrieval.base) look specs up here;
- `two-stage:CAPTIONER+RANKER` looks its parts up here (kinds "captioner" and "ranker");
- `reasonaudio models` and `retrieval.catalog` list the entries;
- `reasonaudio eval --model`'s help and its refusal of text-only encoders read them.

The adapter modules are imported the first time an entry is asked for, not when this module is: so
`import reasonaudio.retrieval` stays cheap, and an adapter module imports its optional packages (torch,
transformers, msclap, ...) only inside its loaders (tests/test_adapters_registry.py holds them to it).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from reasonaudio.errors import UserError
from reasonaudio.retrieval.spec import split_spec

if TYPE_CHECKING:
    from reasonaudio.retrieval.options import ModelOptions

#: The modules that declare `MODELS`, in listing order (within a paradigm, entries keep this order).
ADAPTER_MODULES = (
    "reasonaudio.retrieval.adapters.omni",
    "reasonaudio.retrieval.adapters.clip_style",
    "reasonaudio.retrieval.adapters.clap",
    "reasonaudio.retrieval.adapters.text",
    "reasonaudio.retrieval.adapters.rankers",
    "reasonaudio.retrieval.adapters.captioners",
    "reasonaudio.retrieval.adapters.two_stage",
    "reasonaudio.retrieval.adapters.precomputed",
    "reasonaudio.retrieval.adapters.structured",
    "reasonaudio.retrieval.adapters.detect",
    "reasonaudio.retrieval.adapters.baselines",
)

#: The entry-point group through which another installed package adds `--model` specs, without editing
#: this one: each entry point names a module that declares `MODELS` as the modules above do, e.g. in
#: that package's pyproject.toml `[project.entry-points."reasonaudio.models"] mymodel = "mypkg.reasonaudio_models"`.
ENTRY_POINT_GROUP = "reasonaudio.models"

#: What each `--model` slot is filled with: a whole model, or one of the two parts of `two-stage`.
KINDS = ("model", "captioner", "ranker")

#: Paradigms in listing order, grouped under the word `reasonaudio models --paradigm` filters by.
PARADIGMS: dict[str, tuple[str, ...]] = {
    "MLLM": ("MLLM embedder",),
    "CLIP": ("CLIP-style",),
    "two-stage": ("two-stage", "two-stage captioner", "two-stage ranker"),
    "detect": ("detect-then-reason",),
    "baseline": ("baseline",),
}
_PARADIGM_ORDER = [p for group in PARADIGMS.values() for p in group]


@dataclass(frozen=True)
class Pin:
    """A Hugging Face Hub repository an entry loads, at the revision its figures are made with (as mteb's
    ModelMeta pins one). `revision` is a commit where a public source publishes one, else "main"."""

    repo: str
    revision: str
    source: str  # where the commit was read, or why the entry follows main
    role: str = "weights"  # what the adapter reads from it: weights, processor, base, clip, text encoder
    files: tuple[str, ...] | None = None  # the files it reads (None: the repository, other frameworks left out)

    @property
    def ref(self) -> str:
        return f"{self.repo}@{self.revision}"


@dataclass(frozen=True)
class ModelMeta:
    """One spec name of one kind, declared in the adapter module that implements it."""

    name: str  # the spec's NAME (kind "model") or the part's NAME (captioner / ranker)
    kind: str  # one of KINDS
    form: str  # what to type in its slot: "lco-omni:DIR", "captions=FILE", "bm25"
    paradigm: str  # one of PARADIGMS' values
    # (argument or value, options) -> the model / captioner / ranker; None: listed but not loadable
    loader: Callable[[str | None, ModelOptions], Any] | None
    study: str = ""  # the study's model(s) this reproduces; "" when it is not one of them
    follows: str = ""  # the paper, model card or code its recipe follows
    vram: str = "-"  # GPU memory estimate (from parameter counts, not measured)
    sample_rate: str = "-"  # the rate audio is resampled to
    max_audio: str = "-"  # the longest audio it sees
    packages: tuple[str, ...] = ()  # the Python packages its loader imports
    note: str = ""
    extra: str = "models"  # the pyproject extra that installs `packages` ("" when none can)
    text_only: bool = False  # embeds text only: useful as a two-stage ranker, not on audio
    ranker: str = ""  # for a text-only model: the ranker entry that does its job inside two-stage
    listed: bool = True  # shown by `reasonaudio models` (False: other entries describe it)
    parts: tuple[str, ...] = ()  # the kinds a composite model is written with (two-stage: captioner, ranker)
    # the Hub repositories it loads by default, first the weights a bare spec resolves to
    hub: tuple[Pin, ...] = ()

    def __post_init__(self) -> None:
        # declarations are code: a typo here is a bug, caught the first time the registry loads
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind {self.kind!r} is not one of {KINDS}")
        if self.paradigm not in _PARADIGM_ORDER:
            raise ValueError(f"{self.name}: paradigm {self.paradigm!r} is not one of {_PARADIGM_ORDER}")
        if self.text_only and not self.ranker:
            raise ValueError(f"{self.name}: a text-only model names the ranker entry that replaces it")
        if any(k not in KINDS[1:] for k in self.parts):
            raise ValueError(f"{self.name}: parts {self.parts} are not among {KINDS[1:]}")

    @property
    def repo(self) -> str:
        """The Hub repo id of its default weights ("" when its weights are not on the Hub)."""
        return self.hub[0].repo if self.hub else ""

    @property
    def revision(self) -> str:
        """The pinned revision of `repo` (a commit, or "main" where no public source gives one)."""
        return self.hub[0].revision if self.hub else ""

    @property
    def available(self) -> bool:
        return self.loader is not None

    @property
    def takes_value(self) -> bool:
        """A two-stage part's form is `NAME=PLACEHOLDER` when it needs a value, bare `NAME` when it takes none."""
        return "=" in self.form

    @property
    def spec(self) -> str:
        """What to pass to `--model` to use this entry."""
        if not self.available:
            return "(not available)"
        if self.kind == "captioner":
            return f"two-stage:{self.form}+RANKER"
        if self.kind == "ranker":
            return f"two-stage:CAPTIONER+{self.form}"
        return self.form

    def missing(self) -> list[str]:
        """Packages this entry imports that are not importable here (checked without importing them)."""
        return [p for p in self.packages if importlib.util.find_spec(p) is None]

    def as_dict(self) -> dict:
        return {
            "name": self.name, "kind": self.kind, "spec": self.spec, "paradigm": self.paradigm, "study": self.study,
            "follows": self.follows, "vram": self.vram, "sample_rate": self.sample_rate, "max_audio": self.max_audio,
            "packages": list(self.packages), "note": self.note, "extra": self.extra, "missing": self.missing(),
            "repo": self.repo, "revision": self.revision,
            "hub": [{"repo": p.repo, "revision": p.revision, "role": p.role, "source": p.source} for p in self.hub],
        }


def _plugin_modules() -> list[tuple[str, Any]]:
    """(where, module) of every installed entry point of ENTRY_POINT_GROUP, by name; one that cannot
    be loaded or declares no MODELS is refused in a line naming its distribution."""
    from importlib.metadata import entry_points

    found = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        where = f"entry point {ep.name!r} = {ep.value!r}" + (f" of {ep.dist.name}" if ep.dist is not None else "")
        try:
            module = ep.load()
        except Exception as err:  # a broken plug-in is named, not a traceback from inside the registry
            raise UserError(f"{where} ({ENTRY_POINT_GROUP}): cannot be loaded: {err}") from None
        if not isinstance(getattr(module, "MODELS", None), tuple) or not all(isinstance(m, ModelMeta) for m in module.MODELS):
            raise UserError(f"{where} ({ENTRY_POINT_GROUP}): names no module with a MODELS tuple of ModelMeta")
        found.append((where, module))
    return found


@cache
def _entries() -> tuple[ModelMeta, ...]:
    entries: list[ModelMeta] = []
    seen: set[tuple[str, str]] = set()
    modules = [(name, importlib.import_module(name)) for name in ADAPTER_MODULES] + _plugin_modules()
    for module_name, module in modules:
        for meta in module.MODELS:
            if (meta.kind, meta.name) in seen:
                if module_name.startswith("entry point"):  # another package's declaration: not our bug
                    raise UserError(f"{module_name} ({ENTRY_POINT_GROUP}): {meta.kind} {meta.name!r} is already registered")
                raise ValueError(f"{module_name}: {meta.kind} {meta.name!r} is declared twice")
            seen.add((meta.kind, meta.name))
            entries.append(meta)
    for meta in entries:
        if meta.text_only and ("ranker", meta.ranker) not in seen:
            raise ValueError(f"{meta.name}: text-only model names ranker {meta.ranker!r}, which is not registered")
    return tuple(entries)


def entries(kind: str | None = None) -> list[ModelMeta]:
    """Every registered entry (of one kind), in declaration order."""
    return [m for m in _entries() if kind is None or m.kind == kind]


def listing(paradigm: str | None = None) -> list[ModelMeta]:
    """The entries `reasonaudio models` shows, by paradigm; `paradigm` is a key of PARADIGMS."""
    shown = [m for m in _entries() if m.listed and (paradigm is None or m.paradigm in PARADIGMS[paradigm])]
    return sorted(shown, key=lambda m: _PARADIGM_ORDER.index(m.paradigm))  # stable: declaration order within


def find(kind: str, name: str) -> ModelMeta | None:
    return next((m for m in _entries() if m.kind == kind and m.name == name), None)


def pin(repo: str) -> Pin | None:
    """The pin some entry declares for a Hub repository (a repo id written without @REV takes its revision)."""
    return next((p for m in _entries() for p in m.hub if p.repo == repo), None)


def model_names() -> tuple[str, ...]:
    """The NAMEs `--model NAME[:ARGUMENT]` accepts."""
    return tuple(m.name for m in entries("model") if m.available)


def lookup(spec: str) -> tuple[ModelMeta, str | None]:
    """The entry a `--model` spec names and the argument after its colon; unknown names are refused by listing the known."""
    name, argument = split_spec(spec)
    meta = find("model", name)
    if meta is None:
        raise UserError(f"--model {spec.strip()!r}: unknown model {name!r}; expected one of {', '.join(model_names())}")
    if not meta.available:
        raise UserError(f"--model {spec.strip()!r}: {name} has no adapter ({meta.note})")
    return meta, argument


def part(kind: str, text: str, name: str, value: str | None) -> ModelMeta:
    """The captioner or ranker a two-stage part names, its value checked against its form."""
    meta = find(kind, name)
    if meta is None or not meta.available or meta.takes_value != (value is not None) or (meta.takes_value and not value):
        forms = [m.form for m in entries(kind) if m.available]
        expected = ", ".join(forms[:-1]) + f" or {forms[-1]}" if len(forms) > 1 else "".join(forms)
        raise UserError(f"two-stage {kind} {text!r}: expected {expected}")
    return meta


def text_only_refusal(spec: str) -> str | None:
    """Why a text-only encoder cannot be evaluated on audio, with the two-stage spec that uses it; None for other models."""
    meta, argument = lookup(spec)
    if not meta.text_only:
        return None
    ranker = find("ranker", meta.ranker)
    assert ranker is not None  # _entries checked it
    written = f"{ranker.name}={argument or ranker.form.partition('=')[2]}" if ranker.takes_value else ranker.name
    return (f"--model {spec}: a text encoder cannot embed audio; use it as the ranker of a two-stage model, "
            f"e.g. --model two-stage:oracle+{written}")


def model_help() -> str:
    """The help text of `eval --model`: every loadable form, the two-stage parts spelled out."""
    def forms(kind: str) -> str:
        return " | ".join(m.form for m in entries(kind) if m.available)

    models = []
    for meta in entries("model"):
        if not meta.available or meta.text_only:
            continue
        parts = "; ".join(f"{kind} {forms(kind)}" for kind in meta.parts)
        models.append(f"{meta.form} ({parts})" if parts else meta.form)
    return f"model spec, NAME[:ARG]: {' | '.join(models)}; `reasonaudio models` lists what each needs"
