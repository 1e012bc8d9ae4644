"""Shared test fixtures. The helper modules under `tests/support/` (fixture benchmarks, tiny
model builders, fake speech sources) reach the tests as fixtures, loaded here by file path, so no
test imports a helper by bare name and nothing depends on pytest's import mode or sys.path."""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import pytest

SUPPORT = Path(__file__).resolve().parent / "support"

# The suite never writes into the user's cache (trained detectors, simulated rooms): its own, for
# this run and the subprocesses it starts, removed at the end.
if "REASONAUDIO_CACHE" not in os.environ:
    _CACHE = tempfile.mkdtemp(prefix="reasonaudio-test-cache-")
    os.environ["REASONAUDIO_CACHE"] = _CACHE
    atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)


# No test reaches the Hugging Face Hub: the suite and its subprocesses run offline against an empty
# cache of their own (tests of the online path replace huggingface_hub's download function).
if "REASONAUDIO_TEST_HF_CACHE" not in os.environ:
    _HF = tempfile.mkdtemp(prefix="reasonaudio-test-hf-")
    os.environ.update({"REASONAUDIO_TEST_HF_CACHE": _HF, "HF_HUB_CACHE": _HF, "HF_HUB_OFFLINE": "1"})
    atexit.register(shutil.rmtree, _HF, ignore_errors=True)


def _support(name: str) -> ModuleType:
    qualified = f"reasonaudio_test_support.{name}"
    if qualified in sys.modules:
        return sys.modules[qualified]
    spec = importlib.util.spec_from_file_location(qualified, SUPPORT / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module  # dataclasses and pickling look modules up by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def evalfixture() -> ModuleType:
    """A small hand-made benchmark for evaluation tests (write_fixture, CLIPS, QUERIES, …)."""
    return _support("evalfixture")


@pytest.fixture(scope="session")
def bf() -> ModuleType:
    """A hand-made benchmark with known guarantees for validator tests (write_benchmark, rewrite_table, …)."""
    return _support("benchfixture")


@pytest.fixture(scope="session")
def pristine(bf, tmp_path_factory) -> Path:
    """`bf`'s benchmark, written once and never altered (validator tests read it)."""
    return bf.write_benchmark(tmp_path_factory.mktemp("bench") / "fixture")


@pytest.fixture
def bench(pristine: Path, tmp_path: Path) -> Path:
    """A copy of `pristine` a test may damage (test files with a benchmark of their own name it `bench` too)."""
    return Path(shutil.copytree(pristine, tmp_path / "bench"))


@pytest.fixture(scope="session")
def parquet_sample() -> ModuleType:
    """A small table with the benchmark tables' column kinds (`sample_frame()`), for the parquet writer."""
    return _support("parquet_sample")


@pytest.fixture(scope="session")
def qwen_tiny() -> ModuleType:
    """Builders of tiny random Qwen2-Audio checkpoints (real processor, random weights)."""
    return _support("qwen_tiny")


@pytest.fixture(scope="session")
def omni_tiny() -> ModuleType:
    """Builders of tiny random Qwen2.5-Omni thinker checkpoints."""
    return _support("omni_tiny")


@pytest.fixture(scope="session")
def compose_fakes() -> ModuleType:
    """Deterministic speech and background sources for the compositional diagnostic."""
    return _support("compose_fakes")


@pytest.fixture(scope="session")
def compose_fake_model() -> Path:
    """A scripted command-line 'model' (run as a program by the compose runner)."""
    return SUPPORT / "compose_fake_model.py"


@pytest.fixture(scope="session")
def shardfixture() -> ModuleType:
    """Small build parameters, tree digests and an in-process S3 server for shard and Ray tests."""
    return _support("shardfixture")


@pytest.fixture(scope="session")
def recordings() -> ModuleType:
    """Eight procedural sounds recorded twice each, as a library (two_recordings_per_label, FAMILIES, SR)."""
    return _support("recordings")
