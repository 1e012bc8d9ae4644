"""reasonaudio: build reasoning-intensive text-to-audio retrieval benchmarks and evaluate models on them.

The public API, re-exported here (heavy modules load on first use):

- `build(out, BuildConfig(...))` — synthesize a complete benchmark directory (contract §4)
- `AtomLibrary` — the procedural default library, imported folders, `import_folder`;
  `import_atoms` (class folders, CSV, FSD50K, ESC-50, UrbanSound8K), `pack_debian` (real sounds)
- `annotate(events, queries)` — relevance through the Rust engine, as a polars qrels frame
- `load_benchmark(path)` / `validate_benchmark(path)` — read a benchmark, check its guarantees
- `parse_query(text, atoms)` — the template grammar read back into logic
"""

from __future__ import annotations

import importlib
from typing import Any

from reasonaudio._core import __version__

# The functions users call are `build` (from the build pipeline, `reasonaudio.pipeline`) and
# `annotate` (from the relevance engine's front, `reasonaudio.relevance`); no module shares a
# function's name, so `reasonaudio.build` is always the function.
from reasonaudio.pipeline import BuildConfig, build
from reasonaudio.relevance import annotate, relevance_csr

_EXPORTS = {
    "AtomLibrary": "reasonaudio.atoms",
    "import_folder": "reasonaudio.atoms",
    "import_atoms": "reasonaudio.atom_import",
    "pack_debian": "reasonaudio.atom_pack",
    "load_benchmark": "reasonaudio.dataset",
    "Benchmark": "reasonaudio.dataset",
    "validate_benchmark": "reasonaudio.validate",
    "parse_query": "reasonaudio.queries",
    "UserError": "reasonaudio.errors",
}

__all__ = ["__version__", "annotate", "relevance_csr", "build", "BuildConfig", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'reasonaudio' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
