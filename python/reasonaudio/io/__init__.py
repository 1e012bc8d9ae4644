"""Everything that reads or writes outside the process: the benchmark directory (`benchmark`), BEIR and
Hugging Face folders (`hub`, `beir`), the HF export (`export`), fsspec filesystems (`storage`), the one output
discipline (`outputs`) and audio reading (`audio`)."""

from __future__ import annotations

from pathlib import Path

from reasonaudio.errors import UserError
from reasonaudio.io.benchmark import Benchmark, load_benchmark
from reasonaudio.io.beir import load_beir
from reasonaudio.io.hub import is_hub_folder, load_hub


def load_any_benchmark(path: str | Path) -> Benchmark:
    """A benchmark directory (manifest.json), a BEIR-style folder (corpus.jsonl) or a Hugging Face
    dataset folder as the Hub hands it out (corpus/, queries/, qrels/ config folders or README configs)."""
    root = Path(path)
    if (root / "manifest.json").is_file():
        return load_benchmark(root)
    if (root / "corpus.jsonl").is_file() or (root / "corpus.parquet").is_file():
        return load_beir(root)
    if is_hub_folder(root):
        return load_hub(root)
    raise UserError(
        f"{root}: neither a benchmark directory (manifest.json), a BEIR folder (corpus.jsonl) nor a Hugging Face "
        "dataset folder (corpus/ or <subset>-corpus/ data folders, or README.md `configs:`)"
    )


__all__ = ["Benchmark", "load_any_benchmark", "load_benchmark", "load_beir", "load_hub"]
