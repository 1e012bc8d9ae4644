"""Where an adapter's weights come from: a local path as given, or a Hub repo id through the HF cache.

Every argument an adapter reads weights from (`clap:X`, `bge-m3=X`, `processor=X`, `clip=X`, ...) goes
through `locate`: an existing file or folder is used as it is (and recorded with its size); a value of the
shape `ORG/NAME[@REV]` that is not a local path is a Hugging Face Hub repository, resolved by
`reasonaudio.io.hub_cache` into the user's cache, at the revision written after `@`, else at the
revision a registry entry pins for that repository, else `main`. Anything else is returned unchanged, so
the adapter refuses it as it always did ("no such ... directory").
"""

from __future__ import annotations

from pathlib import Path

from reasonaudio.io.hub_cache import HubRef, folder_bytes, parse_repo, resolve, weight_patterns
from reasonaudio.retrieval import registry
from reasonaudio.retrieval.options import ModelOptions


def hub_ref(text: str) -> HubRef | None:
    """The Hub repository a weights argument names (its revision filled from the registry's pins), or None
    for a local path or a value of another shape."""
    if Path(text).expanduser().exists():
        return None
    parsed = parse_repo(text)
    if parsed is None:
        return None
    repo, revision = parsed
    pinned = registry.pin(repo)
    return HubRef(repo, revision or (pinned.revision if pinned else "main"))


def files_of(repo: str) -> tuple[str, ...] | None:
    """The files the registry says an adapter reads from `repo` (None: the whole repository)."""
    pinned = registry.pin(repo)
    return pinned.files if pinned else None


def locate(text: str, options: ModelOptions, role: str = "weights", files: tuple[str, ...] | None = None) -> Path:
    """The local path of the weights `text` names, fetched into the HF cache first when it is a Hub id.

    `files` restricts the download to those patterns (a checkpoint file in a repository of several);
    the path returned is then the snapshot folder, in which the caller picks its file."""
    ref = hub_ref(text)
    if ref is None:
        path = Path(text).expanduser()
        if path.exists():
            options.loaded.append({"role": role, "repo_id": None, "commit": None, "path": str(path),
                                   "bytes": folder_bytes(path)})
        return path
    allow = files if files is not None else files_of(ref.repo_id)
    fetched = resolve(ref, allow=allow, ignore=weight_patterns(), offline=options.offline, dedupe_pickles=allow is None)
    options.loaded.append({"role": role, **fetched.record()})
    return fetched.path


def locate_str(text: str, options: ModelOptions, role: str = "weights") -> str:
    return str(locate(text, options, role))
