"""Where a build's output lives: a local directory, or any filesystem fsspec opens (`s3://`, `gs://`,
`file://`, `memory://` ...), with the same rule everywhere: never a half-written benchmark.

A local directory is assembled in a temporary sibling and renamed into place (one atomic rename).
Object stores have no rename, so a remote output is assembled under a temporary sibling prefix and
then moved file by file with `manifest.json` last: a remote benchmark is complete exactly when its
manifest exists, and readers (and `reasonaudio merge`) look for the manifest first.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

from reasonaudio.errors import UserError

MANIFEST = "manifest.json"


def is_uri(target: str | os.PathLike) -> bool:
    """A `scheme://` location goes through fsspec; a plain path stays on the local filesystem."""
    return isinstance(target, str) and "://" in target


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
    """An output directory being written. Tables go to `root` (always a local directory); audio to
    `audio_fs`/`audio_dir` (the same place when local, the remote staging prefix otherwise)."""

    def __init__(self, target: str | os.PathLike, force: bool):
        self.target = target
        self.force = force
        self.remote = is_uri(target)
        if self.remote:
            self.fs, self.path = open_fs(str(target))
            self.display = str(target)
        else:
            self.fs, self.path = local_fs(), str(Path(target))
            self.display = str(target)
        self.check()
        self.root: Path | None = None
        self._remote_tmp: str | None = None

    # -- before writing ---------------------------------------------------------------------------

    def check(self) -> None:
        """Refuses a target that is a file, or a non-empty directory without --force."""
        if self.remote:
            fs, path = self.fs, self.path
            if fs.exists(path) and not fs.isdir(path):
                raise UserError(f"{self.display}: exists and is not a directory")
            if fs.exists(path) and fs.ls(path) and not self.force:
                raise UserError(f"{self.display}: directory is not empty (pass --force to replace it)")
            return
        out = Path(self.target)
        if out.exists() and not out.is_dir():
            raise UserError(f"{out}: exists and is not a directory")
        if out.exists() and any(out.iterdir()) and not self.force:
            raise UserError(f"{out}: directory is not empty (pass --force to replace it)")

    def begin(self) -> Path:
        """Creates the staging area; returns the local directory the tables are written to."""
        self.check()  # again: the directory may have changed while the corpus was planned
        if self.remote:
            self.root = Path(tempfile.mkdtemp(prefix="reasonaudio-stage-"))
            parent, _, name = self.path.rstrip("/").rpartition("/")
            self._remote_tmp = _join(parent, f".{name}.tmp-{uuid.uuid4().hex[:12]}") if parent else f".{name}.tmp-{uuid.uuid4().hex[:12]}"
            self.fs.makedirs(_join(self._remote_tmp, "audio"), exist_ok=True)
        else:
            out = Path(self.target)
            out.parent.mkdir(parents=True, exist_ok=True)
            self.root = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
            (self.root / "audio").mkdir()
        return self.root

    @property
    def audio_fs(self):
        return self.fs

    @property
    def audio_dir(self) -> str:
        """Where audio files go while staging (a path of `audio_fs`)."""
        if self.remote:
            return _join(self._remote_tmp, "audio")
        return str(self.root / "audio")

    @property
    def audio_url(self) -> str:
        """`audio_dir` as a location another process can open (a local path or a URI)."""
        if not self.remote:
            return self.audio_dir
        protocol = self.fs.protocol if isinstance(self.fs.protocol, str) else self.fs.protocol[0]
        return f"{protocol}://{self.audio_dir}"

    # -- finishing --------------------------------------------------------------------------------

    def commit(self) -> None:
        """Puts the staged output into place (see the module docstring for what atomic means)."""
        if not self.remote:
            out = Path(self.target)
            if out.exists():
                trash = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
                out.rename(trash / "old")
                self.root.rename(out)
                shutil.rmtree(trash, ignore_errors=True)
            else:
                self.root.rename(out)
            return
        fs, tmp = self.fs, self._remote_tmp
        local = sorted(p for p in self.root.rglob("*") if p.is_file())
        rels = [p.relative_to(self.root).as_posix() for p in local]
        for parent in sorted({r.rpartition("/")[0] for r in rels if "/" in r}):
            fs.makedirs(_join(tmp, parent), exist_ok=True)  # object stores ignore it; file:// needs it
        if local:
            fs.put([str(p) for p in local], [_join(tmp, r) for r in rels])
        if fs.exists(self.path):
            fs.rm(self.path, recursive=True)
        staged = sorted(fs.find(tmp))
        prefix = tmp.rstrip("/") + "/"
        moves = [(p, _join(self.path, p[len(prefix):])) for p in staged if p[len(prefix):] != MANIFEST]
        for parent in sorted({dst.rpartition("/")[0] for _, dst in moves}):
            fs.makedirs(parent, exist_ok=True)
        for src, dst in moves:
            fs.mv(src, dst)
        fs.mv(_join(tmp, MANIFEST), _join(self.path, MANIFEST))
        _rm_quiet(fs, tmp)
        shutil.rmtree(self.root, ignore_errors=True)

    def abort(self) -> None:
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
        if self.remote and self._remote_tmp is not None:
            _rm_quiet(self.fs, self._remote_tmp)


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
