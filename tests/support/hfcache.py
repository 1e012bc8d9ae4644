"""A Hugging Face cache written by hand, and a stand-in for huggingface_hub's download function.

`put` lays a folder out as huggingface_hub does (`models--ORG--NAME/blobs`, `snapshots/<commit>/`,
`refs/<revision>`), so resolving the repository from the cache runs huggingface_hub's own offline code.
`StandIn` replaces `huggingface_hub.snapshot_download` on the online path: it records what was asked
(repo, revision, patterns, dry run or not) and writes the given folder into the cache as a download would.
"""

from __future__ import annotations

import fnmatch
import hashlib
import shutil
from pathlib import Path


def repo_folder(cache: Path, repo_id: str, repo_type: str = "model") -> Path:
    return Path(cache) / f"{repo_type}s--{repo_id.replace('/', '--')}"


def commit_of(repo_id: str, salt: str = "") -> str:
    return hashlib.sha1(f"{repo_id}{salt}".encode()).hexdigest()


def _wanted(name: str, allow, ignore) -> bool:
    if allow is not None and not any(fnmatch.fnmatch(name, p) for p in allow):
        return False
    return not (ignore and any(fnmatch.fnmatch(name, p) for p in ignore))


def put(cache: Path, repo_id: str, source: Path, *, commit: str | None = None, ref: str | None = "main",
        repo_type: str = "model", allow=None, ignore=None) -> Path:
    """Copy `source` (a folder) into the cache as snapshot `commit`; `ref` names it. Returns the snapshot."""
    commit = commit or commit_of(repo_id)
    root = repo_folder(cache, repo_id, repo_type)
    snapshot = root / "snapshots" / commit
    for file in sorted(p for p in Path(source).rglob("*") if p.is_file()):
        rel = file.relative_to(source).as_posix()
        if not _wanted(rel, allow, ignore):
            continue
        blob = root / "blobs" / hashlib.sha256(file.read_bytes()).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        if not blob.exists():
            shutil.copyfile(file, blob)
        link = snapshot / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(Path("../" * (rel.count("/") + 2) + "blobs") / blob.name)
    snapshot.mkdir(parents=True, exist_ok=True)
    if ref is not None:
        (root / "refs").mkdir(parents=True, exist_ok=True)
        (root / "refs" / ref).write_text(commit)
    return snapshot


class _DryRun:
    def __init__(self, filename: str, size: int) -> None:
        self.filename, self.file_size, self.is_cached, self.will_download = filename, size, False, True


class StandIn:
    """`snapshot_download` for tests: repositories it can serve are folders given by repo id."""

    def __init__(self, served: dict[str, Path]) -> None:
        self.served = served
        self.calls: list[dict] = []

    def __call__(self, repo_id, *, repo_type=None, revision=None, cache_dir=None, allow_patterns=None,
                 ignore_patterns=None, local_files_only=False, dry_run=False, **_):
        self.calls.append({"repo_id": repo_id, "revision": revision, "allow": allow_patterns, "ignore": ignore_patterns,
                           "dry_run": dry_run, "local_files_only": local_files_only, "repo_type": repo_type})
        source = self.served[repo_id]
        if dry_run:
            return [_DryRun(p.relative_to(source).as_posix(), p.stat().st_size) for p in sorted(source.rglob("*"))
                    if p.is_file() and _wanted(p.relative_to(source).as_posix(), allow_patterns, ignore_patterns)]
        commit = revision if revision and len(revision) == 40 else commit_of(repo_id)
        return str(put(Path(cache_dir), repo_id, source, commit=commit, ref=None if revision == commit else revision,
                       repo_type=repo_type or "model", allow=allow_patterns, ignore=ignore_patterns))
