"""`build --ray`: Ray tasks on a local cluster (2 CPUs) render byte-identical benchmarks, also when a
worker dies mid-build and Ray retries its task, and to fsspec URIs the workers open themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'reasonaudio[ray]'")

from reasonaudio.build import BuildConfig, build  # noqa: E402
from reasonaudio.distributed import FAULT_ENV, task_chunk  # noqa: E402
from shardfixture import SMALL, leftovers, tree_digest  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=128 * 1024 * 1024)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("plain") / "bench"
    build(out, BuildConfig(**SMALL), progress=False)
    return tree_digest(out)


def test_task_chunks() -> None:
    assert task_chunk(300, 2) == 38  # about four tasks per CPU
    assert task_chunk(10, 8) == 16 and task_chunk(10**7, 2) == 2048


def test_ray_local_is_byte_identical(cluster, plain, tmp_path: Path) -> None:
    out = build(tmp_path / "r", BuildConfig(**SMALL), ray="local", progress=False)
    assert tree_digest(out) == plain
    assert leftovers(tmp_path, "r") == []


def test_killed_worker_is_retried_to_the_same_bytes(cluster, plain, tmp_path: Path, monkeypatch) -> None:
    marker = tmp_path / "killed-once"
    monkeypatch.setenv(FAULT_ENV, str(marker))
    out = build(tmp_path / "r", BuildConfig(**SMALL), ray="local", progress=False)
    assert marker.exists(), "the fault hook did not kill a worker"
    assert tree_digest(out) == plain


def test_ray_to_a_file_uri(cluster, plain, tmp_path: Path) -> None:
    uri = f"file://{tmp_path}/r"
    assert build(uri, BuildConfig(**SMALL), ray="local", progress=False) == uri
    assert tree_digest(tmp_path / "r") == plain
    assert leftovers(tmp_path, "r") == []


def test_failing_task_leaves_nothing(cluster, tmp_path: Path, monkeypatch) -> None:
    # a marker in a missing directory makes the hooked task raise (an error Ray does not retry)
    monkeypatch.setenv(FAULT_ENV, str(tmp_path / "missing" / "marker"))
    with pytest.raises(ray.exceptions.RayTaskError, match="FileNotFoundError"):
        build(tmp_path / "r", BuildConfig(**SMALL), ray="local", progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_memory_uri_is_refused(cluster, tmp_path: Path) -> None:
    from reasonaudio.errors import UserError

    with pytest.raises(UserError, match="memory://"):
        build("memory://ray-test/b", BuildConfig(**SMALL), ray="local", progress=False)


def test_clips_missing_after_rendering_are_reported(tmp_path: Path) -> None:
    from reasonaudio.distributed import _check_written
    from reasonaudio.errors import UserError

    (tmp_path / "a.wav").write_bytes(b"")
    _check_written(str(tmp_path), ["audio/a.wav"])
    with pytest.raises(UserError, match="1 of 2 clips did not reach"):
        _check_written(str(tmp_path), ["audio/a.wav", "audio/b.wav"])
