"""Hub ids to local folders, through huggingface_hub's cache: the one place anything is fetched.

A model is named `ORG/NAME[@REV]`, a dataset `hf://datasets/ORG/NAME[@REV]`; `resolve` hands back the
snapshot folder in the user's Hugging Face cache (`HF_HUB_CACHE`, else `HF_HOME/hub`, else
`~/.cache/huggingface/hub`), downloading what is missing with `huggingface_hub.snapshot_download`, so a
second run downloads nothing. Offline (`HF_HUB_OFFLINE=1`, or `offline=True` from a command's
`--offline`) the cache is the only source: a miss is one line naming the repository, the revision and
the command that fetches it.

Only the files a loader reads are fetched: weights come without the other frameworks' copies (`*.h5`,
`*.msgpack`, ONNX, ...), and PyTorch pickles (`*.bin`, `*.pt`) are left out where the repository has
safetensors (transformers then reads the safetensors); datasets pass the patterns of the files they read.

What was resolved is recorded (`Fetched.record`: repo id, resolved commit, local path, bytes) so that a
results file says which weights produced it.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from pathlib import Path

from reasonaudio.errors import UserError, require

#: what a weights download leaves out: other frameworks' copies of the same weights
OTHER_FRAMEWORKS = ("*.h5", "*.msgpack", "*.ot", "*.onnx", "*.onnx_data", "onnx/*", "openvino/*", "*.tflite",
                    "coreml/*", "*.mlmodel", "*.gguf", "flax_model*", "tf_model*", "rust_model*")
#: PyTorch pickles, left out where the same repository has safetensors
PICKLES = ("*.bin", "*.pt", "*.pth", "*.ckpt")

_REPO = re.compile(r"^(?P<repo>[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*)(?:@(?P<rev>[A-Za-z0-9_./-]+))?$")
_DATASET = re.compile(r"^hf://datasets/(?P<repo>[^@]+?)(?:@(?P<rev>[^@]+))?/?$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class HubRef:
    """A Hub repository at a revision (a commit, branch or tag)."""

    repo_id: str
    revision: str = "main"
    repo_type: str = "model"  # or "dataset"

    def __str__(self) -> str:
        prefix = "hf://datasets/" if self.repo_type == "dataset" else ""
        return f"{prefix}{self.repo_id}@{self.revision}"

    @property
    def pinned(self) -> bool:
        return bool(_COMMIT.match(self.revision))


@dataclass(frozen=True)
class Fetched:
    """A resolved snapshot: which commit a revision pointed to, where it lies, how much it holds."""

    ref: HubRef
    commit: str
    path: Path
    bytes: int

    def record(self) -> dict:
        return {"repo_id": self.ref.repo_id, "repo_type": self.ref.repo_type, "revision": self.ref.revision,
                "commit": self.commit, "path": str(self.path), "bytes": self.bytes}


def parse_repo(text: str) -> tuple[str, str | None] | None:
    """`ORG/NAME[@REV]` -> (repo id, revision or None); None when `text` does not have that shape."""
    m = _REPO.match(text.strip())
    return (m["repo"], m["rev"]) if m else None


def parse_dataset(text: str | os.PathLike) -> HubRef | None:
    """`hf://datasets/ORG/NAME[@REV]` -> its reference (revision `main` when none); None for anything else."""
    m = _DATASET.match(str(text).strip())
    if not m:
        return None
    if parse_repo(m["repo"]) is None:
        raise UserError(f"{text}: expected hf://datasets/ORG/NAME[@REVISION]")
    return HubRef(m["repo"], m["rev"] or "main", "dataset")


def is_offline(flag: bool = False) -> bool:
    """The `--offline` flag, or HF_HUB_OFFLINE set to a true value (read now, not at import)."""
    return flag or os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def cache_dir() -> Path:
    """The Hugging Face hub cache this process uses (read from the environment on every call)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
    return Path(home).expanduser() / "hub"


def fetch_command(ref: HubRef) -> str:
    return f"reasonaudio models --download {ref}"


def _matches(name: str, allow, ignore) -> bool:
    if allow is not None and not any(fnmatch.fnmatch(name, p) for p in allow):
        return False
    return not (ignore and any(fnmatch.fnmatch(name, p) for p in ignore))


def folder_bytes(path: Path, allow=None, ignore=None) -> int:
    """Bytes of the files under `path` (links followed, as the cache's snapshots are links into blobs)."""
    if path.is_file():
        return path.stat().st_size
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            rel = os.path.relpath(os.path.join(root, name), path).replace(os.sep, "/")
            if _matches(rel, allow, ignore):
                try:
                    total += os.stat(os.path.join(root, name)).st_size
                except OSError:  # a dangling link of an interrupted download holds nothing
                    pass
    return total


def _hub():
    return require("huggingface_hub", None, "fetching from the Hugging Face Hub")


def _errors(hf) -> tuple[type[BaseException], ...]:
    errors = hf.errors
    return (errors.RepositoryNotFoundError, errors.RevisionNotFoundError, errors.GatedRepoError,
            errors.EntryNotFoundError, errors.HfHubHTTPError)


def _miss(ref: HubRef) -> UserError:
    return UserError(f"{ref}: not in the Hugging Face cache ({cache_dir()}) and offline; fetch it on a machine "
                     f"with network with `{fetch_command(ref)}` (then copy that cache here)")


def _kwargs(ref: HubRef, allow, ignore) -> dict:
    return {"repo_id": ref.repo_id, "repo_type": ref.repo_type, "revision": ref.revision, "cache_dir": str(cache_dir()),
            "allow_patterns": list(allow) if allow is not None else None,
            "ignore_patterns": list(ignore) if ignore is not None else None}


def weight_patterns(ignore: tuple[str, ...] | None = None) -> list[str]:
    """The ignore patterns of a weights download (other frameworks' copies, plus `ignore`)."""
    return [*OTHER_FRAMEWORKS, *(ignore or ())]


def listing(ref: HubRef, allow=None, ignore=None) -> list:
    """The files a download would fetch (huggingface_hub's dry run: name, size, whether cached); needs network."""
    hf = _hub()
    try:
        return list(hf.snapshot_download(**_kwargs(ref, allow, ignore), dry_run=True))
    except _errors(hf) as err:
        raise UserError(f"{ref}: {_first_line(err)}") from None
    except (OSError, hf.errors.LocalEntryNotFoundError) as err:
        raise UserError(f"{ref}: cannot reach the Hugging Face Hub ({_first_line(err)})") from None


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else err.__class__.__name__


def resolve(ref: HubRef, *, allow=None, ignore=None, offline: bool = False, dedupe_pickles: bool = False) -> Fetched:
    """The snapshot of `ref` in the cache, fetched first unless offline. `dedupe_pickles`: when the
    repository has safetensors, leave its PyTorch pickles (weights only: decided from the listing)."""
    hf = _hub()
    ignore = list(ignore or ())
    try:
        if is_offline(offline):
            path = hf.snapshot_download(**_kwargs(ref, allow, ignore), local_files_only=True)
        else:
            if dedupe_pickles:
                names = [f.filename for f in hf.snapshot_download(**_kwargs(ref, allow, ignore), dry_run=True)]
                if any(n.endswith(".safetensors") for n in names):
                    ignore += [p for p in PICKLES if p not in ignore]
            path = hf.snapshot_download(**_kwargs(ref, allow, ignore))
    except hf.errors.LocalEntryNotFoundError:
        if is_offline(offline):
            raise _miss(ref) from None
        raise UserError(f"{ref}: cannot reach the Hugging Face Hub and it is not in the cache ({cache_dir()})") from None
    except _errors(hf) as err:
        raise UserError(f"{ref}: {_first_line(err)}") from None
    except OSError as err:
        raise UserError(f"{ref}: cannot fetch into {cache_dir()} ({_first_line(err)})") from None
    folder = Path(path)
    return Fetched(ref, folder.name, folder, folder_bytes(folder, allow, ignore))


def cached(ref: HubRef, *, allow=None, ignore=None) -> Fetched | None:
    """The snapshot of `ref` when the cache holds it (nothing fetched); None otherwise."""
    hf = _hub()
    try:
        path = Path(hf.snapshot_download(**_kwargs(ref, allow, ignore), local_files_only=True))
    except (hf.errors.LocalEntryNotFoundError, *_errors(hf), OSError):
        return None
    return Fetched(ref, path.name, path, folder_bytes(path, allow, ignore))


def human_bytes(n: int | None) -> str:
    if n is None:
        return "?"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"  # unreachable; keeps type checkers quiet


#: the files a benchmark loader reads from a Hub dataset (tables, cards, audio); nothing else is fetched
DATASET_FILES = ("*.md", "*.json", "*.jsonl", "*.parquet", "*.tsv", "*.csv", "*.sha256", "*.txt", "*.wav", "*.flac",
                 "*.mp3", "*.ogg")


def dataset_path(text: str | os.PathLike, *, offline: bool = False) -> Path:
    """A benchmark location: `hf://datasets/ORG/NAME[@REV]` resolved to its snapshot in the HF cache (only
    the files a loader reads), anything else as the local path it names."""
    ref = parse_dataset(text)
    if ref is None:
        return Path(text)
    return resolve(ref, allow=DATASET_FILES, offline=offline).path


def bench_argument(text: str) -> str | Path:
    """argparse type of a benchmark argument: a local path, or a Hub dataset URI kept as text (a Path would
    fold its `//`) for the command to resolve with `dataset_path`."""
    return text if parse_dataset(text) is not None else Path(text)
