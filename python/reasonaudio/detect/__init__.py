"""Sound-event detection for detect-then-reason retrieval (`--model detect:LIB_OR_MODEL`).

features (log-mel) -> model (frame tagger, model file) -> data (training mixtures from the Rust
planner and mixer) -> train (time-bounded, cached by library hash) -> infer (event index of a
corpus) -> postprocess (median filter, thresholds, gaps) -> rank (template grammar + Rust engine,
graded score) -> metrics (SED metrics via sed_scores_eval) -> errors (which perception error costs
which task). torch is imported only inside the functions that need it.
"""


def torch_module():
    """torch, or a one-line install hint (exit 2) when it is missing: the detector's one import of it."""
    from reasonaudio.errors import require

    return require("torch", "detect", "the sound-event detector (PyTorch)")
