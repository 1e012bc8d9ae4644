"""One output discipline for every file and folder any command writes (build, eval, report,
annotate, atoms, compose, audit, detect, validate --json, inspect --png, build --save-plan …).

Claim. Before any work, each output is checked and locked:
- An output that is, contains or lies inside one of the command's inputs is refused; except that
  an input folder given as an `InputFolder` (a folder and the files its reader uses, e.g. a compose
  set's manifest, metadata and audio) may hold an output that is none of those files and contains
  none of them (a prompts file kept in its set).
- Two outputs of one command may not be the same path or lie inside each other (`--out X
  --metrics X` is refused before the work, not after the first write).
- A lock beside each output (`.NAME.lock`, flock held for the whole command) makes a second writer
  fail at once; the kernel drops the flock of a killed process, so its lock is free again.

Replace. An output that exists is replaced only when it is recognisably this tool's earlier output
of the same kind, and only with `--force`; anything else is refused with the way to remove it by
hand, so that `--force` can never destroy a user's file:
- a folder is ours only when it holds the marker `.reasonaudio-output` naming its kind (written
  last into every output folder); a commonly named file (manifest.json, results.json …) proves
  nothing. An empty folder may always be used.
- a file is ours when its content says so, by its format (a `FileKind`): a JSON object whose
  `"format"` is the kind's (validate/audit/detect reports), a PNG whose `reasonaudio` text chunk
  names the kind (every figure written alone: `png_metadata`), a plan .npz whose `meta` has the
  plan format, a parquet whose footer metadata names the kind (`parquet_metadata`; qrels, kept
  byte-identical to a benchmark's, by their exact columns), a table whose header row is the kind's,
  a JSON-lines file whose first row has the kind's keys, a detector model (a torch zip) whose
  payload has its format. A user's file of another format, or one of ours of another kind (an
  inspect figure where a contact sheet goes), is refused even with `--force`. An empty file holds
  nothing to lose and counts as ours. There is no registry beside the outputs: the file itself is
  the evidence.

Write. The output is written into `.NAME.tmp-PID` beside it (same filesystem, so the final rename
is atomic) and renamed into place only when complete; on any exception, Ctrl-C or SIGTERM (the CLI
turns it into an exception) the temporary, the lock and any folder the claim created are removed.
Temporaries of the same output left by a `kill -9` are found by the next run (it holds the lock, so
they cannot be live) and removed with a note. Any OS error while writing (a full disk, a read-only
folder) becomes one line naming the output and the reason; the earlier output, if any, is kept.
Files are created as a plain `open` would create them (mode 0o666 less the umask), temporaries
included (`tempfile.mkstemp` would make them 0600).

Scratch. Work that cannot be staged beside its target (an object store has no rename) uses a
`scratch_directory` in the system temp dir, locked the same way, removed in `finally`; one left by a
killed process (its lock is free) is removed by the next command that makes one.
"""

from __future__ import annotations

import logging
import contextlib
import errno
import fcntl
import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from reasonaudio.errors import UserError, require

log = logging.getLogger(__name__)

MARKER = ".reasonaudio-output"


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


def check_distinct(outputs: Sequence[tuple[str, str | os.PathLike[str] | None]]) -> None:
    """Refuse two outputs of one command that are one path or lie inside each other, before any
    work (`--out X --metrics X` would otherwise write X, then refuse to replace it)."""
    given = [(option, path, resolved(path)) for option, path in outputs if path is not None]
    for i, (opt_a, path_a, a) in enumerate(given):
        for opt_b, path_b, b in given[i + 1:]:
            if _inside(a, b) or _inside(b, a):
                raise UserError(f"{opt_a} {path_a} and {opt_b} {path_b} are the same place: give each output its own path")


# -- what counts as an earlier output ----------------------------------------------------------


def kind_of(directory: Path) -> str | None:
    """The kind of reasonaudio output a directory holds, from its marker; None if unmarked."""
    marker = directory / MARKER
    try:
        return str(json.loads(marker.read_text())["kind"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _remove_by_hand(path: Path) -> str:
    return f"remove it yourself (rm {'-r ' if path.is_dir() else ''}{path}) if you no longer need it, or choose another path"


@dataclass(frozen=True)
class FileKind:
    """A kind of single-file output: its name (in messages) and how to recognise its content."""

    name: str
    ours: Callable[[Path], bool]


_READ_LIMIT = 64 << 20  # a header or a report; a bigger "JSON report" is not one of ours


def _head(path: Path, n: int) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(n)


def json_kind(name: str, fmt: str) -> FileKind:
    """A JSON object whose "format" is `fmt` (any version: the part before "/" must match)."""
    family = fmt.split("/")[0]

    def ours(path: Path) -> bool:
        if path.stat().st_size > _READ_LIMIT:
            return False
        obj = json.loads(path.read_bytes())
        return isinstance(obj, dict) and str(obj.get("format", "")).split("/")[0] == family

    return FileKind(name, ours)


def jsonl_kind(name: str, keys: Sequence[str]) -> FileKind:
    """JSON lines whose first row is an object with every one of `keys`."""

    def ours(path: Path) -> bool:
        with open(path, "rb") as fh:
            first = fh.readline(_READ_LIMIT)
        row = json.loads(first)
        return isinstance(row, dict) and all(k in row for k in keys)

    return FileKind(name, ours)


def header_kind(name: str, header: str, *, prefix: bool = False) -> FileKind:
    """A text table whose first line is `header` (with `prefix`: begins with it; the rest names
    columns that vary, such as listeners)."""
    expected = header.encode()

    def ours(path: Path) -> bool:
        first = _head(path, 1 << 16).splitlines()[0]
        return first.startswith(expected) if prefix else first == expected

    return FileKind(name, ours)


PNG_KEY = "reasonaudio"


def png_metadata(kind: FileKind) -> dict[str, str]:
    """The `metadata=` of `savefig` that marks a PNG as this kind's (a tEXt chunk)."""
    return {PNG_KEY: kind.name}


def png_kind(name: str) -> FileKind:
    """A PNG with a tEXt chunk `reasonaudio` = `name` before its image data (`png_metadata`)."""
    import struct

    wanted = PNG_KEY.encode() + b"\0" + name.encode("latin-1")

    def ours(path: Path) -> bool:
        with open(path, "rb") as fh:
            if fh.read(8) != b"\x89PNG\r\n\x1a\n":
                return False
            while True:
                head = fh.read(8)
                if len(head) < 8:
                    return False
                length, ctype = struct.unpack(">I4s", head)
                if ctype in (b"IDAT", b"IEND") or length > 1 << 20:
                    return False
                data = fh.read(length)
                fh.read(4)  # crc
                if ctype == b"tEXt" and data == wanted:
                    return True

    return FileKind(name, ours)


def npz_kind(name: str, fmt: str | tuple[str, ...]) -> FileKind:
    """A numpy .npz whose `meta` array is JSON with "format" `fmt` (one of them, for a tuple: the
    build plan's versions)."""
    formats = (fmt,) if isinstance(fmt, str) else fmt

    def ours(path: Path) -> bool:
        import numpy as np

        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(bytes(z["meta"]).decode())
        return isinstance(meta, dict) and meta.get("format") in formats

    return FileKind(name, ours)


def parquet_metadata(kind: FileKind) -> dict[str, str]:
    """The footer metadata (`write_parquet(metadata=...)`) that marks a parquet file as this kind's."""
    return {PNG_KEY: kind.name}


def parquet_kind(name: str, columns: Sequence[str] | None = None) -> FileKind:
    """A parquet file whose footer metadata names the kind (`parquet_metadata`); with `columns`,
    also one written before it was marked, recognised by exactly those columns."""

    def ours(path: Path) -> bool:
        require("pyarrow", "arrow", "recognising an earlier parquet output")
        import pyarrow.parquet as pq

        file = pq.ParquetFile(path)
        # polars writes the marker into the file's key-value metadata, not the Arrow schema's
        meta = file.metadata.metadata or {}
        if meta.get(PNG_KEY.encode()) == name.encode():
            return True
        return columns is not None and list(file.schema_arrow.names) == list(columns)

    return FileKind(name, ours)


def _file_is(path: Path, kind: FileKind) -> bool:
    try:
        if path.stat().st_size == 0:
            return True  # nothing to lose
        return bool(kind.ours(path))
    except Exception:  # an unreadable or foreign file is simply not ours
        return False


#: The keyword that replaces an output from Python where it is not `force` (the atom importers and
#: `AtomLibrary.save` say `overwrite`).
_PYTHON_FORCE = {"atom library": "overwrite=True"}


def force_advice(kind: str) -> str:
    """How to replace an earlier output of `kind`: the same check serves the CLI and the Python API,
    so the advice names both the option and the keyword."""
    return f"pass --force ({_PYTHON_FORCE.get(kind, 'force=True')} from Python) to replace it"


def check_writable(out: Path, option: str = "--out") -> None:
    """Refuse, before any work, an output whose folder (or the nearest one that exists) cannot be
    written: a read-only filesystem, a folder without write permission."""
    folder = Path(os.path.abspath(out)).parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        return  # a file where a folder is expected: the claim names it
    # a probe file, made and removed: permission bits alone do not tell (root passes every access
    # check, yet cannot create files in /proc or on a read-only mount)
    try:
        fd, probe = tempfile.mkstemp(prefix=".reasonaudio-probe-", dir=folder)
    except OSError as err:
        raise UserError(f"{option} {out}: cannot write into {folder} ({err.strerror or err})") from None
    os.close(fd)
    os.unlink(probe)


def check_file(out: Path, kind: FileKind, force: bool, option: str = "--out") -> bool:
    """Whether the file `out` exists and will be replaced; raises when it may not be."""
    check_writable(out, option)
    if out.is_dir():
        raise UserError(f"{option} {out}: is a directory; expected a file path")
    if not out.exists() and not out.is_symlink():
        return False
    if not out.is_file() or not _file_is(out, kind):
        raise UserError(f"{option} {out}: exists and is not a reasonaudio {kind.name}; refusing to replace it: "
                        f"{_remove_by_hand(out)}")
    if not force:
        raise UserError(f"{option} {out}: holds an earlier {kind.name}; {force_advice(kind.name)}")
    return True


def check_directory(out: Path, kind: str, force: bool, option: str = "--out") -> bool:
    """Whether the directory `out` exists and will be replaced; raises when it may not be."""
    check_writable(out, option)
    if not out.exists():
        return False
    if not out.is_dir():
        raise UserError(f"{option} {out}: exists and is not a directory")
    if not any(out.iterdir()):
        return True
    marked = kind_of(out)
    if marked != kind:
        what = f"a reasonaudio {marked}" if marked else f"no reasonaudio {kind} (no {MARKER} marker)"
        raise UserError(f"{option} {out}: directory is not empty and holds {what}; refusing to replace it: "
                        f"{_remove_by_hand(out)}")
    if not force:
        raise UserError(f"{option} {out}: holds an earlier {kind}; {force_advice(kind)}")
    return True


# -- locks, temporaries, errors ----------------------------------------------------------------


def _flock(path: Path) -> int | None:
    """An exclusive flock on `path` (created), or None when another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        os.close(fd)
        if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return None
        raise
    return fd


class _Lock:
    """An exclusive flock on `.NAME.lock` beside the output, held until released."""

    def __init__(self, out: Path):
        self.out = out
        self.path = out.parent / f".{out.name}.lock"
        self.fd: int | None = None

    def acquire(self) -> None:
        try:
            fd = _flock(self.path)
        except OSError as err:
            raise UserError(f"{self.out}: cannot write in {self.path.parent} ({err.strerror})") from None
        if fd is None:
            holder = ""
            with contextlib.suppress(OSError, ValueError):
                holder = f" (process {int(self.path.read_text().strip())})"
            raise UserError(f"{self.out}: another reasonaudio command is writing it{holder}")
        self.fd = fd
        # the holder's pid is only a courtesy for the message above: a full disk may refuse it
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())

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
        log.warning("reasonaudio: note: removed %s, left by an interrupted run", stale)


class _Claim:
    """The folder of an output (created if needed, and removed again if the claim fails while it is
    empty) and the lock on the output."""

    def __init__(self, out: Path):
        self.out = out
        self.created: list[Path] = []
        self.lock = _Lock(out)

    def __enter__(self) -> "_Claim":
        missing = []
        parent = self.out.parent
        while not parent.exists() and parent != parent.parent:
            missing.append(parent)
            parent = parent.parent
        try:
            self.out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            self._undo()
            raise UserError(f"{self.out}: cannot create its folder {err.filename or self.out.parent} ({err.strerror})") from None
        self.created = missing
        try:
            self.lock.acquire()
        except BaseException:
            self._undo()
            raise
        return self

    def _undo(self) -> None:
        for folder in self.created:  # deepest first
            with contextlib.suppress(OSError):
                folder.rmdir()
        self.created = []

    def release(self, failed: bool) -> None:
        self.lock.release()
        if failed:
            self._undo()


_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EIO, errno.EACCES, errno.EPERM}


def _disk_full(folder: Path) -> bool:
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    return st.f_bavail == 0 or st.f_favail == 0


def _errno_of(err: BaseException) -> int | None:
    """The OS error number of `err`: its own, or the one a Rust/Arrow library put in its message
    ("… (os error 28)", "[errno 28] …") when it wrapped the OS error in its own."""
    import re

    if isinstance(err, OSError) and err.errno:
        return err.errno
    found = re.search(r"os error (\d+)|\[errno (\d+)\]", str(err), re.IGNORECASE)
    return int(found.group(1) or found.group(2)) if found else None


@contextlib.contextmanager
def _naming_write_errors(out: Path, tmp: Path, replacing: bool) -> Iterator[None]:
    """OS errors of writing the output (they often carry no path: a write on a full disk, or a
    library's error wrapping one) become one line naming the output. Errors about other files (an
    input that cannot be read) and all other errors pass unchanged."""
    try:
        yield
    except (UserError, KeyboardInterrupt):
        raise
    except Exception as err:
        names = [n for n in (getattr(err, "filename", None), getattr(err, "filename2", None)) if n is not None]
        if names and not any(_inside(resolved(n), resolved(tmp)) or resolved(n) == resolved(out) for n in names):
            raise  # about another file
        number = _errno_of(err)
        if number not in _WRITE_ERRNOS:
            if not _disk_full(out.parent):
                raise
            number = errno.ENOSPC
        kept = " (the earlier one is kept)" if replacing else ""
        raise UserError(f"{out}: cannot write it: {os.strerror(number)}; nothing was written{kept}") from None


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


# -- the outputs -------------------------------------------------------------------------------


@contextlib.contextmanager
def output_directory(
    out: str | os.PathLike[str],
    kind: str,
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    force: bool = False,
    option: str = "--out",
) -> Iterator[Path]:
    """Claim `out` for a `kind` output and yield an empty temporary directory to write it in; on
    normal exit the temporary, marked with its kind, replaces `out` atomically."""
    out = Path(out)
    inputs = list(inputs)
    check_not_an_input(out, inputs, option)
    check_directory(out, kind, force, option)
    claim = _Claim(out).__enter__()
    tmp: Path | None = None
    failed = True
    try:
        _remove_stale(out)
        replace = check_directory(out, kind, force, option)  # again, now that no one else can write it
        tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
        with _naming_write_errors(out, tmp, replace):
            tmp.mkdir()
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
        failed = False
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        claim.release(failed)


def _create(path: Path) -> int:
    """A new file opened for writing, with the mode a plain `open` gives (0o666 less the umask)."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write a whole file or nothing: into a new temporary beside `path`, then renamed onto it. The
    file gets the mode a plain `open` would give it (unlike `tempfile.mkstemp`'s 0600). For files
    inside a claimed output (`output_directory`, `output_file`); a file of its own is claimed with
    `write_output`."""
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


@dataclass(frozen=True)
class FileOutput:
    """One single-file output of a command: the path, its kind, and the option that named it."""

    path: str | os.PathLike[str]
    kind: FileKind
    option: str = "--out"


@contextlib.contextmanager
def output_files(
    outputs: Sequence[FileOutput],
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    force: bool = False,
) -> Iterator[list[Path]]:
    """Claim every file of `outputs` at once (before the work) and yield a temporary path beside
    each (same suffix) to write; on normal exit each replaces its file atomically."""
    inputs = list(inputs)
    check_distinct([(o.option, o.path) for o in outputs])
    for o in outputs:
        check_not_an_input(o.path, inputs, o.option)
        check_file(Path(o.path), o.kind, force, o.option)
    claims: list[_Claim] = []
    tmps: list[Path] = []
    failed = True
    try:
        replacing = []
        for o in outputs:
            out = Path(o.path)
            claims.append(_Claim(out).__enter__())
            _remove_stale(out)
            replacing.append(check_file(out, o.kind, force, o.option))  # again, under the lock
            tmps.append(out.parent / f".{out.name}.tmp-{os.getpid()}{out.suffix}")
        with contextlib.ExitStack() as naming:
            for o, tmp, rep in zip(outputs, tmps, replacing):
                naming.enter_context(_naming_write_errors(Path(o.path), tmp, rep))
            yield list(tmps)
            for o, tmp in zip(outputs, tmps):
                if not tmp.exists():
                    raise FileNotFoundError(errno.ENOENT, "the command wrote nothing", str(tmp))
            for o, tmp in zip(outputs, tmps):
                os.replace(tmp, o.path)
        failed = False
    finally:
        for tmp in tmps:
            _remove(tmp)
        for claim in reversed(claims):
            claim.release(failed)


@contextlib.contextmanager
def output_file(
    out: str | os.PathLike[str],
    kind: FileKind,
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    force: bool = False,
    option: str = "--out",
) -> Iterator[Path]:
    """Claim the file `out` and yield a temporary path beside it (same suffix) to write; on normal
    exit it replaces `out` atomically (see `output_files`)."""
    with output_files([FileOutput(out, kind, option)], inputs=inputs, force=force) as (tmp,):
        yield tmp


def write_output(
    out: str | os.PathLike[str],
    kind: FileKind,
    data: str | bytes,
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    force: bool = False,
    option: str = "--out",
) -> Path:
    """A whole single-file output at once, under the rules of `output_file`."""
    with output_file(out, kind, inputs=inputs, force=force, option=option) as tmp:
        fd = _create(tmp)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
    return Path(out)


# -- scratch in the system temp dir ------------------------------------------------------------

SCRATCH_PREFIX = "reasonaudio-stage-"
_SCRATCH_LOCK = ".lock"


def _remove_stale_scratch(root: Path) -> None:
    """Scratch folders of dead processes: their lock is free (a live one holds it)."""
    for stale in sorted(root.glob(f"{SCRATCH_PREFIX}*")):
        lock = stale / _SCRATCH_LOCK
        if not stale.is_dir() or not lock.is_file():
            continue  # not yet locked by its maker, or not ours: leave it
        try:
            fd = _flock(lock)
        except OSError:
            continue
        if fd is None:
            continue  # alive
        try:
            shutil.rmtree(stale, ignore_errors=True)
            log.warning("reasonaudio: note: removed %s, left by an interrupted run", stale)
        finally:
            os.close(fd)


@contextlib.contextmanager
def scratch_directory(what: str = "stage") -> Iterator[Path]:
    """An empty private folder in the system temp dir for work that cannot be staged beside its
    target, held locked while in use and always removed at the end; stale ones are cleaned first."""
    root = Path(tempfile.gettempdir())
    _remove_stale_scratch(root)
    path = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{what}-", dir=root))
    fd = None
    try:
        fd = _flock(path / _SCRATCH_LOCK)
        work = path / "work"  # the lock stays out of what the caller uploads or lists
        work.mkdir()
        yield work
    finally:
        shutil.rmtree(path, ignore_errors=True)
        if fd is not None:
            os.close(fd)
