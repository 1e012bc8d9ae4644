"""One output discipline for every command that writes (build, eval, report, annotate, atoms import,
compose, audit, export …).

- An `--out` that exists is replaced only when it is this kind's own earlier output (marked by a
  `.reasonaudio-output` file naming the kind, or recognised by the kind's signature file) and
  `--force` is given; an empty directory may be used; anything else is refused.
- An `--out` that is, contains or lies inside one of the command's inputs is refused; except that
  an input folder given as an `InputFolder` (a folder and the files its reader uses, e.g. a compose
  set's manifest, metadata and audio) may hold an output that is none of those files and contains
  none of them (a prompts file kept in its set).
- A lock beside the output (`.NAME.lock`, held with flock for the whole command) makes a second
  writer on the same `--out` fail at once; a lock left by a killed process is free again, since the
  kernel drops flocks of dead processes.
- The output is written into `.NAME.tmp-PID` beside it (same filesystem, so the final rename is
  atomic) and renamed into place only when complete; on any exception, Ctrl-C or SIGTERM (the CLI
  turns it into an exception) the temporary is removed. Temporaries of the same output left by a
  `kill -9` are found by the next run (it holds the lock, so they cannot be live) and removed with
  a note.
- Files are created as a plain `open` would create them (mode 0o666 less the umask), temporaries
  included (`tempfile.mkstemp` would make them 0600).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import secrets
import shutil
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from reasonaudio.errors import UserError

MARKER = ".reasonaudio-output"

#: A file that identifies an output of each kind written before outputs were marked.
SIGNATURES = {
    "benchmark": "manifest.json",
    "eval results": "results.json",
    "report": "comparison.json",
    "atom library": "atoms.parquet",
    "compose set": "manifest.json",
    "compose results": "results.json",
    "audit site": "cards.js",
}


def resolved(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.abspath(os.path.realpath(os.fspath(path))))


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


@dataclass(frozen=True)
class InputFolder:
    """An input folder whose own files (those its reader uses) are known: an output may lie inside
    it as long as it is none of them and contains none of them."""

    path: str | os.PathLike[str]
    files: tuple[str | os.PathLike[str], ...]

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return os.fspath(self.path)


def check_not_an_input(out: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]], option: str = "--out") -> None:
    """Refuse an output path that is, contains or lies inside an input (inside an `InputFolder`:
    only one that is or contains one of its own files)."""
    target = resolved(out)
    for given in inputs:
        source = resolved(given)
        if target == source:
            raise UserError(f"{option} {out} is the input {given}: refusing to overwrite an input")
        if _inside(source, target):
            raise UserError(f"{option} {out} contains the input {given}: refusing to replace it")
        if _inside(target, source):
            if not isinstance(given, InputFolder):
                raise UserError(f"{option} {out} lies inside the input {given}: write the output elsewhere")
            for own in given.files:
                if _inside(resolved(own), target):
                    what = "is" if resolved(own) == target else "contains"
                    raise UserError(f"{option} {out} {what} {own}, a file of the input {given}: "
                                    "refusing to overwrite an input (choose another name)")


def kind_of(directory: Path) -> str | None:
    """The kind of reasonaudio output a directory holds, from its marker; None if unmarked."""
    marker = directory / MARKER
    try:
        return str(json.loads(marker.read_text())["kind"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _is_kind(directory: Path, kind: str) -> bool:
    marked = kind_of(directory)
    if marked is not None:
        return marked == kind
    signature = SIGNATURES.get(kind)
    return signature is not None and (directory / signature).is_file()


class _Lock:
    """An exclusive flock on `.NAME.lock` beside the output, held until released."""

    def __init__(self, out: Path):
        self.path = out.parent / f".{out.name}.lock"
        self.fd: int | None = None

    def acquire(self) -> None:
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as err:
            raise UserError(f"{self.path.parent}: cannot write here ({err.strerror})") from None
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            os.close(self.fd)
            self.fd = None
            if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                holder = ""
                with contextlib.suppress(OSError, ValueError):
                    holder = f" (process {int(self.path.read_text().strip())})"
                raise UserError(f"{self.path.parent / self.path.name[1:-5]}: another reasonaudio command is writing it{holder}") from None
            raise
        os.ftruncate(self.fd, 0)
        os.write(self.fd, f"{os.getpid()}\n".encode())

    def release(self) -> None:
        if self.fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)  # while still holding it, so no one else holds this inode
        os.close(self.fd)
        self.fd = None


def _remove_stale(out: Path) -> None:
    for stale in sorted(out.parent.glob(f".{out.name}.tmp-*")) + sorted(out.parent.glob(f".{out.name}.old-*")):
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                stale.unlink()
        print(f"reasonaudio: note: removed {stale}, left by an interrupted run", file=sys.stderr)


def check_directory(out: Path, kind: str, force: bool) -> bool:
    """Whether `out` exists and will be replaced; raises when it may not be."""
    if not out.exists():
        return False
    if not out.is_dir():
        raise UserError(f"{out}: exists and is not a directory")
    if not any(out.iterdir()):
        return True
    if not _is_kind(out, kind):
        raise UserError(f"{out}: directory is not empty and holds no reasonaudio {kind}; refusing to replace it (choose another --out)")
    if not force:
        raise UserError(f"{out}: holds an earlier {kind}; pass --force to replace it")
    return True


def _claim(out: Path) -> _Lock:
    """The output's folder (created if needed) and the lock on `out`, held by the caller."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"{out.parent}: cannot create the output's folder ({err.strerror})") from None
    lock = _Lock(out)
    lock.acquire()
    return lock


@contextlib.contextmanager
def output_directory(
    out: str | os.PathLike[str],
    kind: str,
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    force: bool = False,
) -> Iterator[Path]:
    """Claim `out` for a `kind` output and yield an empty temporary directory to write it in; on
    normal exit the temporary, marked with its kind, replaces `out` atomically."""
    out = Path(out)
    check_not_an_input(out, inputs)
    check_directory(out, kind, force)
    lock = _claim(out)
    tmp: Path | None = None
    try:
        _remove_stale(out)
        replace = check_directory(out, kind, force)  # again, now that no one else can write it
        tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
        try:
            tmp.mkdir()
        except OSError as err:
            raise UserError(f"{out.parent}: cannot write here ({err.strerror})") from None
        yield tmp
        (tmp / MARKER).write_text(json.dumps({"kind": kind}) + "\n")
        if replace:
            old = out.parent / f".{out.name}.old-{os.getpid()}"
            out.rename(old)
            tmp.rename(out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(out)
        tmp = None
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        lock.release()


def _create(path: Path) -> int:
    """A new file opened for writing, with the mode a plain `open` gives (0o666 less the umask)."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write a whole file or nothing: into a new temporary beside `path`, then renamed onto it. The
    file gets the mode a plain `open` would give it (unlike `tempfile.mkstemp`'s 0600)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    while True:
        tmp = path.parent / f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            fd = _create(tmp)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


@contextlib.contextmanager
def output_file(
    out: str | os.PathLike[str],
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    force: bool = False,
) -> Iterator[Path]:
    """Claim the file `out` and yield a temporary path beside it (same suffix) to write; on normal
    exit it replaces `out` atomically. An existing file is replaced only with `force`."""
    out = Path(out)
    check_not_an_input(out, inputs)
    if out.is_dir():
        raise UserError(f"{out}: is a directory; expected a file path")
    if out.exists() and not force:
        raise UserError(f"{out}: exists; pass --force to replace it")
    lock = _claim(out)
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}{out.suffix}"
    try:
        _remove_stale(out)
        yield tmp
        os.replace(tmp, out)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        lock.release()
