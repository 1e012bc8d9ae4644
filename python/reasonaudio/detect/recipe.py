"""Recipes: what `detect train` builds, in small versioned TOML files shipped with the package.

A recipe is the one home of the detector's defaults. `procedural` (one tagger on dry mixtures: the
default build's detector), `scenes` (the same through the scene renderer) and `recordings` (two
taggers with prototype heads, averaged, plus the pretrained aiSFX head: for libraries of real
recordings) live in `detect/recipes/`; `auto` takes `procedural` for the procedural library and
`recordings` for any other; a path to a FILE.toml of the same shape names one of the user's own.
The CLI, the `detect:` model adapter and the benches all read them here, so `--model detect:LIB`
trains exactly what `detect train LIB` trains.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from reasonaudio.detect.augment import AugmentConfig
from reasonaudio.errors import UserError

FORMAT = "reasonaudio-detect-recipe/1"
SHIPPED = Path(__file__).with_name("recipes")
NAMES = ("auto", "procedural", "scenes", "recordings")
AUGMENTS = {"off": AugmentConfig.off, "scene": AugmentConfig.core_scene}
STEMS = ("1d", "2d", "2d-halftime")  # the network's stems (detect.model); recipes use 2d-halftime
#: The version of TrainConfig.key(): a cached tagger is served only to the config it was trained with.
KEY_VERSION = 2


def _read(path: Path) -> dict:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"--recipe {path}: no such file (expected {', '.join(NAMES)} or a recipe FILE.toml)") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as err:
        raise UserError(f"--recipe {path}: not a readable TOML file ({err})") from None
    if data.get("format") != FORMAT:
        raise UserError(f"--recipe {path}: format {data.get('format')!r}, expected {FORMAT!r}")
    return data


_TAGGER = _read(SHIPPED / "procedural.toml")["tagger"]


@dataclass(frozen=True)
class TrainConfig:
    """One tagger's training run. The defaults are the `procedural` recipe's (recipes/procedural.toml)."""

    steps: int = _TAGGER["steps"]
    batch: int = _TAGGER["batch"]
    lr: float = _TAGGER["lr"]
    seed: int = 0
    channels: int = _TAGGER["channels"]
    crop_s: float = _TAGGER["crop_s"]
    valid_clips: int = _TAGGER["valid_clips"]
    labels: int | None = None  # train on the first N labels only
    valid_fraction: float = _TAGGER["valid_fraction"]
    checks: int = _TAGGER["checks"]
    augment: AugmentConfig = field(default_factory=AUGMENTS[_TAGGER["augment"]])
    spec_augment: bool = _TAGGER["spec_augment"]
    dropout: float = _TAGGER["dropout"]
    stem: str = _TAGGER["stem"]
    #: share of overlapping clips in un-augmented plans (an augmented run plans with its AugmentConfig's)
    overlap_fraction: float = _TAGGER["overlap_fraction"]
    #: seed of the validation split of recordings; None: the training seed (an ensemble's taggers share one)
    valid_seed: int | None = None
    max_seconds: float | None = None  # safety stop: exceeding it fails the run (no model is written)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["augment"] = self.augment.to_dict()
        if self.augment.enabled:  # not used: the record says augment.overlap_fraction alone
            d.pop("overlap_fraction")
        return d

    def key(self) -> str:
        """What a cached tagger is filed under: everything that changes its weights."""
        d = self.to_dict()
        d.pop("max_seconds")  # a safety stop does not change the model
        return hashlib.sha256(json.dumps({"key_version": KEY_VERSION, **d}, sort_keys=True).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Recipe:
    name: str
    description: str
    tagger: TrainConfig
    taggers: int = 1
    prototypes: dict | None = None  # {"include_valid": bool}
    aisfx: dict | None = None  # {"weight", "mixtures", "epochs", "include_valid"}
    minutes: float = 0.0  # CPU minutes of one core for the whole recipe ([cost]; said before a training starts)
    command: str = ""  # what `--recipe` names it by: a shipped name, or the FILE.toml's path

    def configs(self, seed: int = 0) -> list[TrainConfig]:
        """One TrainConfig per tagger: seeds seed, seed+1, …; an ensemble's share the first one's validation split."""
        if self.taggers == 1:
            return [replace(self.tagger, seed=seed)]
        return [replace(self.tagger, seed=seed + k, valid_seed=seed) for k in range(self.taggers)]

    def with_tagger(self, **changes) -> Recipe:
        return replace(self, tagger=replace(self.tagger, **changes))


def _check(path: Path, table: str, data: dict, allowed: dict[str, type | tuple]) -> dict:
    for key, value in data.items():
        if key not in allowed:
            raise UserError(f"--recipe {path}: [{table}] has no setting {key!r} (known: {', '.join(sorted(allowed))})")
        want = allowed[key]
        ok = isinstance(value, want) and not (isinstance(value, bool) and bool not in (want if isinstance(want, tuple) else (want,)))
        if not ok:
            raise UserError(f"--recipe {path}: [{table}] {key} = {value!r} has the wrong type")
    return data


def _parse(path: Path, name: str, data: dict, command: str) -> Recipe:
    number = (int, float)
    unknown = set(data) - {"format", "description", "tagger", "ensemble", "prototypes", "aisfx", "cost"}
    if unknown:
        raise UserError(f"--recipe {path}: unknown table or key {sorted(unknown)[0]!r}")
    tagger = _check(path, "tagger", dict(data.get("tagger", {})), {
        "steps": int, "batch": int, "lr": number, "channels": int, "crop_s": number, "stem": str, "overlap_fraction": number,
        "spec_augment": bool, "dropout": number, "augment": str, "valid_fraction": number, "valid_clips": int, "checks": int})
    augment = tagger.pop("augment", "off")
    if augment not in AUGMENTS:
        raise UserError(f"--recipe {path}: [tagger] augment = {augment!r}, expected one of {', '.join(AUGMENTS)}")
    if tagger.get("stem", "2d-halftime") not in STEMS:
        raise UserError(f"--recipe {path}: [tagger] stem = {tagger['stem']!r}, expected one of {', '.join(STEMS)}")
    ensemble = _check(path, "ensemble", dict(data.get("ensemble", {})), {"taggers": int})
    taggers = ensemble.get("taggers", 1)
    if not 1 <= taggers <= 16:
        raise UserError(f"--recipe {path}: [ensemble] taggers = {taggers}, expected 1..16")
    prototypes = data.get("prototypes")
    if prototypes is not None:
        prototypes = {"include_valid": False, **_check(path, "prototypes", dict(prototypes), {"include_valid": bool})}
    aisfx = data.get("aisfx")
    if aisfx is not None:
        aisfx = {"weight": 0.3, "mixtures": 4000, "epochs": 30, "include_valid": False,
                 **_check(path, "aisfx", dict(aisfx), {"weight": number, "mixtures": int, "epochs": int, "include_valid": bool})}
        if not 0.0 < aisfx["weight"] <= 1.0:
            raise UserError(f"--recipe {path}: [aisfx] weight = {aisfx['weight']}, expected within (0, 1]")
    cost = _check(path, "cost", dict(data.get("cost", {})), {"minutes": number})
    config = TrainConfig(**tagger, augment=AUGMENTS[augment]())
    return Recipe(name=name, description=str(data.get("description", "")), tagger=config, taggers=taggers,
                  prototypes=prototypes, aisfx=aisfx, minutes=float(cost.get("minutes", 0.0)), command=command)


def resolve(name: str, libraries: list[str]) -> str:
    """The shipped recipe `auto` stands for: `procedural` for the procedural library, else `recordings`."""
    if name != "auto":
        return name
    return "procedural" if all(str(lib) == "procedural" for lib in libraries) else "recordings"


def load(name: str = "auto", libraries: list[str] | tuple = ("procedural",)) -> Recipe:
    """A shipped recipe by name (`auto` chosen by `libraries`), or a recipe FILE.toml."""
    name = resolve(str(name), [str(x) for x in libraries])
    command = name
    if name in NAMES:
        path = SHIPPED / f"{name}.toml"
    else:
        path = Path(name)
        if path.suffix != ".toml":
            raise UserError(f"--recipe {name}: expected {', '.join(NAMES)} or a recipe FILE.toml")
        name = path.stem
    return _parse(path, name, _read(path), command)
