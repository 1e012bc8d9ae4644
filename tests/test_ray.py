"""`build --ray`: Ray tasks on a local cluster (2 CPUs) render byte-identical benchmarks, also when a
worker dies mid-build and Ray retries its task, and to fsspec URIs the workers open themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'reasonaudio[ray]'")

from reasonaudio.builder import BuildConfig, build  # noqa: E402
from reasonaudio.builder.ray import FAULT_ENV, task_chunk  # noqa: E402


@pytest.fixture(scope="module")
def s3(shardfixture):
    """An in-process S3 server when moto and s3fs are installed (else None); started before the
    cluster so that its workers get the endpoint in their environment."""
    try:
        import moto.server  # noqa: F401
        import s3fs  # noqa: F401
    except ImportError:
        yield None
        return

    shardfixture.quiet_s3_logs()
    with shardfixture.s3_server() as env:
        yield env


@pytest.fixture(scope="module")
def cluster(s3):
    runtime_env = {"env_vars": dict(s3)} if s3 else None
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=128 * 1024 * 1024, runtime_env=runtime_env)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def plain(shardfixture, tmp_path_factory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("plain") / "bench"
    build(out, BuildConfig(**shardfixture.SMALL), progress=False)
    return shardfixture.tree_digest(out)


def test_task_chunks() -> None:
    assert task_chunk(300, 2) == 38  # about four tasks per CPU
    assert task_chunk(10, 8) == 16 and task_chunk(10**7, 2) == 2048


def test_ray_local_is_byte_identical(shardfixture, cluster, plain, tmp_path: Path) -> None:
    out = build(tmp_path / "r", BuildConfig(**shardfixture.SMALL), ray="local", progress=False)
    assert shardfixture.tree_digest(out) == plain
    assert shardfixture.leftovers(tmp_path, "r") == []


def test_killed_worker_is_retried_to_the_same_bytes(shardfixture, cluster, plain, tmp_path: Path, monkeypatch) -> None:
    marker = tmp_path / "killed-once"
    monkeypatch.setenv(FAULT_ENV, str(marker))
    out = build(tmp_path / "r", BuildConfig(**shardfixture.SMALL), ray="local", progress=False)
    assert marker.exists(), "the fault hook did not kill a worker"
    assert shardfixture.tree_digest(out) == plain


def test_ray_to_a_file_uri(shardfixture, cluster, plain, tmp_path: Path) -> None:
    uri = f"file://{tmp_path}/r"
    assert build(uri, BuildConfig(**shardfixture.SMALL), ray="local", progress=False) == uri
    assert shardfixture.tree_digest(tmp_path / "r") == plain
    assert shardfixture.leftovers(tmp_path, "r") == []


def test_failing_task_leaves_nothing(shardfixture, cluster, tmp_path: Path, monkeypatch) -> None:
    # a marker in a missing directory makes the hooked task raise (an error Ray does not retry)
    monkeypatch.setenv(FAULT_ENV, str(tmp_path / "missing" / "marker"))
    with pytest.raises(ray.exceptions.RayTaskError, match="FileNotFoundError"):
        build(tmp_path / "r", BuildConfig(**shardfixture.SMALL), ray="local", progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_memory_uri_is_refused(shardfixture, cluster, tmp_path: Path) -> None:
    from reasonaudio.errors import UserError

    with pytest.raises(UserError, match="memory://"):
        build("memory://ray-test/b", BuildConfig(**shardfixture.SMALL), ray="local", progress=False)


def test_clips_missing_after_rendering_are_reported(tmp_path: Path) -> None:
    from reasonaudio.builder.ray import _check_written
    from reasonaudio.errors import UserError

    (tmp_path / "a.wav").write_bytes(b"")
    _check_written(str(tmp_path), ["audio/a.wav"])
    with pytest.raises(UserError, match="1 of 2 clips did not reach"):
        _check_written(str(tmp_path), ["audio/a.wav", "audio/b.wav"])


def test_ray_to_s3(shardfixture, cluster, s3, tmp_path: Path) -> None:
    if s3 is None:
        pytest.skip("moto[server] and s3fs are needed for the in-process S3 server")
    small = {**shardfixture.SMALL, "clips": 120, "queries_per_task": 2}
    build(tmp_path / "plain", BuildConfig(**small), progress=False)
    assert build("s3://bench/ray", BuildConfig(**small), ray="local", progress=False) == "s3://bench/ray"
    assert shardfixture.tree_digest("s3://bench/ray") == shardfixture.tree_digest(tmp_path / "plain")


def test_a_scene_build_on_ray_is_byte_identical(shardfixture, cluster, tmp_path: Path) -> None:
    pytest.importorskip("pyroomacoustics", reason="simulated rooms need the scene extra")
    scene = {"background": "noise:pink", "snr_db": [0.0, 20.0], "room": "simulated:0.3,0.4", "pitch_semitones": [-1.0, 1.0]}
    config = BuildConfig(clips=60, queries_per_task=3, seed=5, scene=scene)
    plain = shardfixture.tree_digest(build(tmp_path / "plain", config, progress=False))
    assert shardfixture.tree_digest(build(tmp_path / "r", config, ray="local", progress=False)) == plain
