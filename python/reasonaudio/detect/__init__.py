"""Sound-event detection for detect-then-reason retrieval (`--model detect:LIB_OR_MODEL`).

features (log-mel) [+ pretrained (optional aiSFX CNN embeddings)] -> model (frame tagger, model
file) -> data (training mixtures from the Rust planner and mixer) [+ augment (recording variants,
beds, rooms; opt-in)] -> train (reproducible by steps/batch/seed, validated on held-out
recordings, cached by library hash) -> enrol (few-shot labels as prototypes, no retraining) [+ prototypes (every trained label scored by
prototypes of its training recordings, alone or averaged with the head; opt-in)] [+ ensemble (several
taggers' probabilities averaged in one model file; opt-in)] [+ aisfx_heads (the pretrained aiSFX
CNN's label scores mixed into the trained labels'; opt-in)] ->
infer (event index of a corpus) -> postprocess (median filter, thresholds, gaps) -> rank
(template grammar + Rust engine, graded score) -> metrics (SED metrics via sed_scores_eval) ->
errors (which perception error costs which task). torch is imported only inside the functions
that need it.
"""


def unit_rows(x):
    """Rows of a numpy array scaled to unit length (a zero row stays zero): the cosines of the
    prototype heads (prototypes, aisfx_heads)."""
    import numpy as np

    return x / (np.linalg.norm(x, axis=-1, keepdims=True) + 1e-12)


def torch_module():
    """torch, or a one-line install hint (exit 2) when it is missing: the detector's one import of it."""
    from reasonaudio.errors import require

    return require("torch", "detect", "the sound-event detector (PyTorch)")


def torch_device(name: str | None, option: str = "--device") -> str:
    """The torch device to run on: `name` checked before any work (a typo or `cuda` on a machine
    without a GPU failed deep inside torch, after loading or training), or cuda when a GPU is
    visible, else cpu."""
    import re

    from reasonaudio.errors import UserError

    torch = torch_module()
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


def check_model_or_library(spec: str) -> None:
    """`spec` of `detect run` / `--model detect:SPEC` names a model file, an atom library directory
    or `procedural`; a path that is none of them is named as missing (it was reported as "not an
    atom library", which misleads when a model file was meant)."""
    from pathlib import Path

    from reasonaudio.errors import UserError

    path = Path(spec)
    if spec == "procedural" or path.is_file() or path.is_dir():
        return
    what = "detector model file" if path.suffix in (".pt", ".pth") else "detector model file or atom library directory"
    raise UserError(f"{spec}: no such {what} (expected a model written by `detect train`, an atom library, or procedural)")
