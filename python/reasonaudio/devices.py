"""The torch device a command or a model runs on: the one check of `--device`."""

from __future__ import annotations

import re

from reasonaudio.errors import UserError, require


def torch_device(name: str | None, option: str = "--device", extra: str = "models") -> str:
    """The torch device to run on: `name` checked before any work (a typo, or `cuda` on a machine
    without a GPU, would otherwise fail deep inside torch after loading or training), or cuda when
    a GPU is visible, else cpu. A missing torch is the install hint of `extra`."""
    torch = require("torch", extra, "PyTorch models")
    if not name:
        return "cuda" if torch.cuda.is_available() else "cpu"
    match = re.fullmatch(r"(cpu|cuda|mps)(?::(\d+))?", name)
    if match is None:
        raise UserError(f"{option} {name}: expected cpu, cuda, cuda:N or mps")
    kind, index = match.group(1), match.group(2)
    if kind == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise UserError(f"{option} {name}: no CUDA GPU is visible to torch on this machine (use --device cpu)")
        if index is not None and int(index) >= count:
            raise UserError(f"{option} {name}: this machine has {count} CUDA GPU(s), cuda:0..cuda:{count - 1}")
    if kind == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise UserError(f"{option} {name}: the Apple GPU backend (mps) is not available here")
    return name
