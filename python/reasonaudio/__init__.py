"""reasonaudio: build reasoning-intensive text-to-audio retrieval benchmarks and evaluate models on them.

The public API, re-exported here; every name (`__version__` too) loads its module on first use, so
`import reasonaudio` stays cheap:

- `build(out, BuildConfig(...))` — synthesize a complete benchmark directory (contract §4); returns
  a `Built` (its path and the manifest it wrote)
- `AtomLibrary` — the procedural default library and library directories; `import_folder`,
  `import_atoms` (class folders, CSV, FSD50K, ESC-50, UrbanSound8K), `pack_debian` (real sounds)
- `annotate(events, queries)` / `relevance_csr` — relevance through the Rust engine
- `load_benchmark(path)` / `load_any_benchmark(path)` / `validate_benchmark(path)` — read a
  benchmark (or a BEIR / Hugging Face folder), check its guarantees
- `parse_query(text, atoms)` — the template grammar read back into logic
- `evaluate(benchmark, model)` / `load_model(spec)` — rank and score a model (`EmbeddingModel`,
  `ScoringModel` to write one, `ModelMeta` to declare it, `load_mono` to read its audio);
  `tasks_for(path)` — the benchmark as mteb tasks

docs/api.md says which names are stable.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # What type checkers see: the real names behind the lazy `__getattr__` below (never run).
    # docs/api.md says which of them are stable.
    from reasonaudio._core import __version__  # noqa: F401  (re-exported through __getattr__)
    from reasonaudio.atoms import AtomLibrary, import_atoms, import_folder  # noqa: F401  (re-exported through __getattr__)
    from reasonaudio.atoms.sources.debian import pack_debian  # noqa: F401  (re-exported through __getattr__)
    from reasonaudio.builder import BuildConfig, Built, build  # noqa: F401  (re-exported through __getattr__)
    from reasonaudio.errors import UserError  # noqa: F401  (re-exported through __getattr__)
    from reasonaudio.io import Benchmark, load_any_benchmark, load_benchmark  # noqa: F401  (re-exported through __getattr__)
    from reasonaudio.queries import parse_query  # noqa: F401  (re-exported through __getattr__)
    from reasonaudio.relevance import annotate, relevance_csr  # noqa: F401  (re-exported through __getattr__)
    from reasonaudio.validate import validate_benchmark  # noqa: F401  (re-exported through __getattr__)
    from reasonaudio.evaluation.mteb import tasks_for  # noqa: F401  (re-exported through __getattr__)
    from reasonaudio.evaluation.run import evaluate  # noqa: F401  (re-exported through __getattr__)
    from reasonaudio.retrieval import load_model  # noqa: F401  (re-exported through __getattr__)
    from reasonaudio.retrieval.adapters.audio import load_mono  # noqa: F401  (re-exported through __getattr__)
    from reasonaudio.retrieval.base import EmbeddingModel, ScoringModel  # noqa: F401  (re-exported through __getattr__)
    from reasonaudio.retrieval.registry import ModelMeta  # noqa: F401  (re-exported through __getattr__)

# A library leaves logging to the program: without this, Python's last-resort handler would print
# the library's warnings on stderr of any script that imports it (reasonaudio.console).
logging.getLogger(__name__).addHandler(logging.NullHandler())

# `__version__` too loads on first use: `reasonaudio.cli` imports this package before it can install
# its signal handling, and the extension takes ~0.2 s to load, so an eager import here turned a
# Ctrl-C in a command's first moments into a KeyboardInterrupt traceback
_EXPORTS = {
    "__version__": "reasonaudio._core",
    "build": "reasonaudio.builder",
    "BuildConfig": "reasonaudio.builder",
    "Built": "reasonaudio.builder",
    "annotate": "reasonaudio.relevance",
    "relevance_csr": "reasonaudio.relevance",
    "AtomLibrary": "reasonaudio.atoms",
    "import_folder": "reasonaudio.atoms",
    "import_atoms": "reasonaudio.atoms",
    "pack_debian": "reasonaudio.atoms.sources.debian",
    "load_benchmark": "reasonaudio.io",
    "load_any_benchmark": "reasonaudio.io",
    "Benchmark": "reasonaudio.io",
    "validate_benchmark": "reasonaudio.validate",
    "parse_query": "reasonaudio.queries",
    "UserError": "reasonaudio.errors",
    "evaluate": "reasonaudio.evaluation.run",
    "load_model": "reasonaudio.retrieval",
    "EmbeddingModel": "reasonaudio.retrieval.base",
    "ScoringModel": "reasonaudio.retrieval.base",
    "ModelMeta": "reasonaudio.retrieval.registry",
    "load_mono": "reasonaudio.retrieval.adapters.audio",
    "tasks_for": "reasonaudio.evaluation.mteb",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'reasonaudio' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
