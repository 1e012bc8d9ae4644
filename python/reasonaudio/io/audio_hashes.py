"""`audio.sha256`: the sha256 of every audio file of a benchmark, in `sha256sum` format.

The manifest's hashes cover the tables, the BEIR files and the atom bank, not the rendered audio:
a clip with bytes flipped inside an event passed `validate` (its peak, silence and audibility
checks cannot see a few hundred changed samples). Build and merge write this file beside the
manifest; `validate` and `export` check the audio against it, and `sha256sum -c audio.sha256`
does too. It is an extra file (contract §4 allows them), not an entry of the manifest, so the
manifest of a build stays byte-identical to the one before the file existed.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path

from reasonaudio.errors import UserError

AUDIO_HASHES = "audio.sha256"
_LINE = re.compile(r"^([0-9a-f]{64}) [ *](.+)$")


def sha256_bytes_of(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_audio_hashes(root: Path, rel_paths: Sequence[str], audio_fs=None, audio_dir: str | None = None) -> Path:
    """Hash every audio path (`audio/<name>`) into root/audio.sha256, sorted by path. The files are
    read from `root/<rel>`, or from `audio_dir` of the fsspec filesystem `audio_fs` where an output
    stages its audio elsewhere (a URI: that reads the audio back once)."""
    def digest(rel: str) -> str:
        if audio_fs is None or audio_dir is None:
            return sha256_bytes_of(root / rel)
        h = hashlib.sha256()
        with audio_fs.open(f"{audio_dir.rstrip('/')}/{rel.rpartition('/')[2]}", "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()

    lines = [f"{digest(rel)}  {rel}\n" for rel in sorted(rel_paths)]
    path = root / AUDIO_HASHES
    path.write_text("".join(lines), encoding="utf-8")
    return path


def read_audio_hashes(root: Path) -> dict[str, str] | None:
    """{audio path: sha256} from root/audio.sha256, None where the benchmark has none (older builds)."""
    path = Path(root) / AUDIO_HASHES
    if not path.is_file():
        return None
    return parse_audio_hashes(path.read_bytes(), str(path))


def parse_audio_hashes(data: bytes, where: str) -> dict[str, str]:
    """{audio path: sha256} of the text of an audio.sha256 file (`where` names it in errors)."""
    out: dict[str, str] = {}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UserError(f"{where}: not UTF-8 text (byte {err.start})") from None
    path = where
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        m = _LINE.match(line)
        if m is None:
            raise UserError(f"{path} line {line_no}: expected '<sha256>  audio/<file>' (sha256sum format), got {line[:80]!r}")
        out[m.group(2)] = m.group(1)
    return out
