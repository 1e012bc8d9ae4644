"""Where a build's output lives: a local directory, or any filesystem fsspec opens (`s3://`, `gs://`,
`file://`, `memory://` ...), with the same rule everywhere: never a half-written benchmark.

A local directory is assembled in a temporary sibling and renamed into place (one atomic rename);
a `file://` URI is a local directory and follows exactly the same rules (`reasonaudio.io.outputs`:
lock, kind marker, stale temporaries removed). Object stores have no rename, so a remote output is assembled under a temporary sibling prefix and
then moved file by file with `manifest.json` last: a remote benchmark is complete exactly when its
manifest exists, and readers (and `reasonaudio merge`) look for the manifest first. Their tables
are staged in a locked `scratch_directory` of the system temp dir, always removed at the end (one
left by a killed process is removed by the next command). `memory://` lives only as long as the
process: the CLI refuses it (`check_persistent`).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

from reasonaudio.errors import UserError
from reasonaudio.io.outputs import MARKER, force_advice, output_directory, scratch_directory

MANIFEST = "manifest.json"


def is_uri(target: str | os.PathLike) -> bool:
    """A `scheme://` location goes through fsspec; a plain path stays on the local filesystem."""
    return isinstance(target, str) and "://" in target


def check_persistent(target: str | os.PathLike | None, option: str = "--out") -> None:
    """Refuse an output that vanishes when the command ends (memory://), before any work."""
    if target is not None and is_uri(target) and str(target).split("://", 1)[0] == "memory":
        raise UserError(f"{option} {target}: a memory:// location vanishes when the command ends; "
                        "write to a folder, a file:// URI or an object store")


def _local_path(url: str) -> str | None:
    """The local path of a URI on the local filesystem (file://, local://), else None."""
    fs, path = open_fs(url)
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)
    return path if "file" in protocols or "local" in protocols else None


def open_fs(url: str):
    """(filesystem, path inside it) for a URI, with a clear error for a scheme whose driver is
    missing (s3:// needs s3fs, gs:// needs gcsfs)."""
    import fsspec

    try:
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as err:
        raise UserError(f"{url}: cannot open this location through fsspec ({err})") from None


def local_fs():
    import fsspec

    return fsspec.filesystem("file")


def _join(base: str, rel: str) -> str:
    return f"{base.rstrip('/')}/{rel}"


class Output:
    """An output directory being written, as a context manager: on normal exit the staged output
    is put into place, on an exception it is removed. Tables go to `root` (always a local
    directory); audio to `audio_url` (the same place when local, the remote staging prefix
    otherwise). A local output follows `reasonaudio.io.outputs` (lock, kind marker, refusals).
    `streamed` names the folder of the large files (a benchmark's `audio`, an export's `corpus`):
    they go to the destination as they are made, so a remote output never stages them together."""

    def __init__(self, target: str | os.PathLike, kind: str, *, inputs=(), force: bool = False, streamed: str = "audio"):
        self.target = target
        self.kind = kind
        self.streamed = streamed
        self.force = force
        self.inputs = [i for i in inputs if not is_uri(i)]
        if is_uri(target):
            local = _local_path(str(target))
            if local is not None:  # file://: a local directory, staged beside and locked like one
                self.target = target = local
        self.remote = is_uri(target)
        self.root: Path | None = None
        self._remote_tmp: str | None = None
        self._local = None
        self._scratch = None
        if self.remote:
            self.fs, self.path = open_fs(str(target))
            self.path = self.path.rstrip("/")
        else:
            self.fs, self.path = None, os.path.abspath(target)

    # -- context ----------------------------------------------------------------------------------

    def __enter__(self) -> "Output":
        if not self.remote:


            self._local = output_directory(self.target, self.kind, inputs=self.inputs, force=self.force)
            self.root = self._local.__enter__()
            (self.root / self.streamed).mkdir()
            return self
        self._check_remote()
        self._scratch = scratch_directory("stage")
        self.root = self._scratch.__enter__()
        try:
            parent, _, name = self.path.rpartition("/")
            token = f".{name}.tmp-{uuid.uuid4().hex[:12]}"
            # the filesystem's own spelling (memory:// roots paths at "/"), so that the paths
            # `find` returns under it start with it
            self._remote_tmp = self.fs._strip_protocol(_join(parent, token) if parent else token).rstrip("/")
            self.fs.makedirs(_join(self._remote_tmp, self.streamed), exist_ok=True)
        except BaseException:
            self._abort_remote()
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if not self.remote:
            return bool(self._local.__exit__(exc_type, exc, tb))
        try:
            if exc_type is None:
                self._commit_remote()
        finally:
            self._abort_remote()  # whatever is left: the remote staging prefix, the local scratch
        return False

    @property
    def audio_fs(self):
        if self.fs is None:
            self.fs = local_fs()
        return self.fs

    @property
    def audio_dir(self) -> str:
        """Where the streamed files (audio) go while staging (a path of `audio_fs`)."""
        if self.remote:
            return _join(self._remote_tmp, self.streamed)
        return str(self.root / self.streamed)

    @property
    def audio_url(self) -> str:
        """`audio_dir` as a location another process can open (a local path or a URI)."""
        if not self.remote:
            return self.audio_dir
        protocol = self.fs.protocol if isinstance(self.fs.protocol, str) else self.fs.protocol[0]
        return f"{protocol}://{self.audio_dir}"

    # -- remote outputs ---------------------------------------------------------------------------

    def _check_remote(self) -> None:
        """The refusals of `reasonaudio.io.outputs`, on a remote filesystem (it has no locks)."""


        fs, path, shown = self.fs, self.path, str(self.target)
        if not fs.exists(path):
            return
        if not fs.isdir(path):
            raise UserError(f"{shown}: exists and is not a directory")
        if not fs.ls(path):
            return
        try:
            kind = json.loads(fs.cat_file(_join(path, MARKER)))["kind"]
        except (OSError, ValueError, KeyError, TypeError):
            kind = None
        if kind != self.kind:
            raise UserError(f"{shown}: directory is not empty and holds no reasonaudio {self.kind}; refusing to replace it (choose another --out)")
        if not self.force:
            raise UserError(f"{shown}: holds an earlier {self.kind}; {force_advice(self.kind)}")

    def _commit_remote(self) -> None:


        fs, tmp = self.fs, self._remote_tmp
        self._check_remote()  # again: the location may have changed while the output was made
        (self.root / MARKER).write_text(json.dumps({"kind": self.kind}) + "\n")
        local = sorted(p for p in self.root.rglob("*") if p.is_file())
        rels = [p.relative_to(self.root).as_posix() for p in local]
        for parent in sorted({r.rpartition("/")[0] for r in rels if "/" in r}):
            fs.makedirs(_join(tmp, parent), exist_ok=True)  # object stores ignore it; file:// needs it
        fs.put([str(p) for p in local], [_join(tmp, r) for r in rels])
        if fs.exists(self.path):
            fs.rm(self.path, recursive=True)
        prefix = tmp.rstrip("/") + "/"
        staged = sorted(p[len(prefix):] for p in fs.find(tmp))
        # the files that say "complete" go last: a reader that sees them sees everything else
        last = [name for name in LAST_FILES if name in staged]
        order = [r for r in staged if r not in last] + last
        for parent in sorted({_join(self.path, r).rpartition("/")[0] for r in order}):
            fs.makedirs(parent, exist_ok=True)
        for rel in order:
            fs.mv(_join(tmp, rel), _join(self.path, rel))
        _rm_quiet(fs, tmp)
        self._remote_tmp = None

    def _abort_remote(self) -> None:
        """Remove the remote staging prefix (if still there) and the local scratch, always."""
        if self._remote_tmp is not None:
            _rm_quiet(self.fs, self._remote_tmp)
            self._remote_tmp = None
        if self._scratch is not None:
            scratch, self._scratch = self._scratch, None
            scratch.__exit__(None, None, None)


LAST_FILES = (MANIFEST, "shard.json", ".reasonaudio-output")


def _rm_quiet(fs, path: str) -> None:
    try:
        if fs.exists(path):
            fs.rm(path, recursive=True)
    except OSError:
        pass


def upload_dir(local_dir: Path, fs, dest: str) -> None:
    """Copies every file of `local_dir` to `dest` on `fs` (one batched put), then removes it."""
    files = sorted(p for p in Path(local_dir).iterdir() if p.is_file())
    if files:
        fs.put([str(p) for p in files], [_join(dest, p.name) for p in files])
    shutil.rmtree(local_dir, ignore_errors=True)


def location(target: str | os.PathLike):
    """(filesystem, path) of a location to read: a local path or a URI."""
    if is_uri(target):
        return open_fs(str(target))
    return local_fs(), os.path.abspath(target)
