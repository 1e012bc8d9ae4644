"""Helpers of the scale-out tests: content digests of a benchmark tree on any fsspec filesystem,
a local S3-compatible server (moto) when it is installed."""

from __future__ import annotations

import hashlib
import os
from contextlib import contextmanager
from pathlib import Path

SMALL = dict(clips=300, queries_per_task=5, seed=3)


def tree_digest(root) -> dict[str, str]:
    """sha256 of every file under `root` (a local path or a URI), by relative path."""
    from reasonaudio.io import storage

    fs, path = storage.location(str(root) if not isinstance(root, Path) else root)
    path = path.rstrip("/")
    return {f[len(path) + 1 :]: hashlib.sha256(fs.cat_file(f)).hexdigest() for f in sorted(fs.find(path))}


def leftovers(parent: Path, name: str) -> list[str]:
    """Temporary siblings a build or merge left next to `parent / name`."""
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}."))


@contextmanager
def s3_server():
    """An in-process S3-compatible server (moto) with a bucket `bench`; the environment points
    botocore (and so s3fs, also in Ray workers started afterwards) at it."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    env = {
        "AWS_ENDPOINT_URL": f"http://{host}:{port}",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        import s3fs

        s3fs.S3FileSystem.clear_instance_cache()
        fs = s3fs.S3FileSystem()
        # moto keeps its buckets per process, not per server: start from an empty bucket
        fs.makedirs("bench", exist_ok=True)
        for key in fs.ls("bench", refresh=True):
            fs.rm(key, recursive=True)
        yield env
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.stop()


def quiet_s3_logs() -> None:
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
