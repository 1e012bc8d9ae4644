"""Sound-event detection for detect-then-reason retrieval (`detect train|run|enrol`, `--model detect:LIB_OR_MODEL`).

By role: recipe (what to train: the shipped TOML recipes, TrainConfig) -> library (atom libraries
and their validation split) -> data, augment (training mixtures from the Rust planner and mixer)
-> features, pretrained (log-mel; the pretrained aiSFX CNN) -> records (what a model was trained
on and how) -> model (the network, the model file, `frame_probabilities`: the one forward pass)
-> heads built beside a trained tagger (prototypes, ensemble, aisfx_heads, enrol) -> train (a
tagger; a recipe's stages) -> infer (event index of a corpus) -> postprocess (median filter,
thresholds, gaps) -> rank (template grammar + Rust engine, graded score) -> metrics (SED metrics)
-> errors (which perception error costs which task).
Inference and the heads never import the training module; torch is imported only inside the
functions that need it.
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


#: Training runs on one thread whatever REASONAUDIO_TORCH_THREADS says: intra-op parallelism splits
#: the float reductions of convolutions differently, and 1 and 2 threads gave different weights.
TRAIN_THREADS = 1


def torch_threads() -> int:
    """Intra-op threads for detection: 1 unless REASONAUDIO_TORCH_THREADS says otherwise (on a
    loaded machine torch's thread pool spins; on a quiet one 2 threads are faster)."""
    import os

    return max(1, int(os.environ.get("REASONAUDIO_TORCH_THREADS", "1")))


class Deterministic:
    """torch's deterministic algorithms and a fixed thread count for the run, restored after."""

    def __init__(self, threads: int):
        self.threads = threads

    def __enter__(self):
        torch = torch_module()

        self.saved = (torch.are_deterministic_algorithms_enabled(), torch.get_num_threads())
        torch.use_deterministic_algorithms(True)
        torch.set_num_threads(self.threads)
        return self

    def __exit__(self, *exc):
        torch = torch_module()

        torch.use_deterministic_algorithms(self.saved[0])
        torch.set_num_threads(self.saved[1])
        return False


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
