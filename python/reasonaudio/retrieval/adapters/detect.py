"""Detect-then-reason retrieval (`detect:LIB_OR_MODEL`): hear the events, then reason over them.

Perception: a sound-event detector (`reasonaudio.detect`) loaded from a model file, or, for an
atom library LIB (``procedural`` or a library directory), the model `detect train LIB` trains (its
`auto` recipe; trained once, announced in one line, and cached). Reasoning: each query text is parsed by the template grammar over the model's
own vocabulary, and the Rust relevance engine is run on the detected events; the graded score of
`reasonaudio.detect.rank` orders the whole corpus. The adapter reads only clip audio and query
texts — no events, atoms or logic from the benchmark — so it runs on a folder holding only `beir/`
and `audio/`.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from reasonaudio.errors import UserError
from reasonaudio.devices import torch_device
from reasonaudio.retrieval.base import ClipSet, ModelOptions, QuerySet, ScoringModel, require
from reasonaudio.retrieval.registry import ModelMeta


class DetectModel(ScoringModel):
    def __init__(self, argument: str, options: ModelOptions):
        require("torch", extra="detect")
        require("scipy", extra="detect")  # the median filter of the detections
        from reasonaudio.detect import check_model_or_library
        from reasonaudio.detect.train import detector_for

        check_model_or_library(argument)
        self.options = options
        self.device = torch_device(options.device, extra="detect")
        t0 = time.perf_counter()
        # the announcement of a training (what, how long, where cached, how to train ahead) is not progress: always said
        log = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
        self.detector, self.model_path = detector_for(argument, device=self.device, progress=options.progress, log=log)
        self.trained_now = time.perf_counter() - t0 > 5
        self.index = None
        self.unparsed: list[str] = []
        self.detect_seconds = None

    def score(self, queries: QuerySet, clips: ClipSet) -> np.ndarray:
        from reasonaudio.detect.infer import detect
        from reasonaudio.detect.rank import overlap_pairs, parse_queries, score_matrix

        # Queries first (cheap): a detector of another library parses none of them, and scored
        # 0.0% after detecting the whole corpus, with no word of why.
        logics, bad = parse_queries(list(queries.texts), self.detector.labels, self.detector.phrases)
        self.unparsed = [queries.ids[i] for i in bad]
        if queries.ids and len(bad) == len(queries.ids):
            d = self.detector
            shown = ", ".join(d.labels[:6]) + (", …" if len(d.labels) > 6 else "")
            raise UserError(
                f"{self.model_path}: none of the {len(queries.ids)} queries uses the detector's vocabulary "
                f"({len(d.labels)} labels of library {d.library.given!r}: {shown}); e.g. query "
                f"{queries.ids[0]!r}: {queries.texts[0]!r}. The detector was trained on another atom library (or on --labels N of it): "
                "train a detector on that library (--model detect:LIBRARY)"
            )
        t0 = time.perf_counter()
        self.index = detect(self.detector, list(clips.paths), list(clips.ids), device=self.device, progress=self.options.progress,
                            pairs=overlap_pairs(logics, self.detector.labels))
        self.detect_seconds = round(time.perf_counter() - t0, 2)
        return score_matrix(self.index, logics)

    def describe(self) -> dict:
        """The setting, recorded in results.json."""
        d = self.detector
        return {
            "setting": "audio only; grammar-parsed queries over a closed vocabulary (the detector's labels)",
            "model_file": str(self.model_path),
            "recipe": d.training.recipe,
            "taggers": 1 + len(d.members),  # > 1: an ensemble, probabilities averaged
            # the pretrained aiSFX CNN's label scores mixed in (its weights are not in the model file)
            "aisfx_heads": ({"weight": d.aisfx.weight, "checkpoint_sha256": d.aisfx.checkpoint_sha256,
                             "attribution": d.aisfx.attribution, "settings": d.aisfx.settings} if d.aisfx else None),
            "vocabulary": {"labels": len(d.labels), "library": d.library.given, "library_hash": d.library.hash},
            "training_data": (
                f"{d.training.clips_seen} mixtures ({d.training.audio_hours_seen} h) planned by the Rust planner and "
                f"rendered by the Rust mixer from library {d.library.given!r}, seeds {d.training.seeds}"
            ),
            "exemplar_split": d.library.exemplar_split,
            "training": d.training.to_dict(),
            "post": d.post.to_dict(),
            "rank_thresholds": list(self.index.thresholds) if self.index is not None else None,
            "detect_seconds": self.detect_seconds,
            "unparsed_queries": self.unparsed,
            "device": self.device,
        }


def from_spec(argument: str | None, options: ModelOptions) -> DetectModel:
    if not argument:
        raise UserError("--model detect:LIB_OR_MODEL: give an atom library (`procedural` or a directory) or a model file")
    return DetectModel(argument, options)


MODELS = (
    ModelMeta("detect", "model", "detect:LIB_OR_MODEL", "detect-then-reason", from_spec,
              vram="CPU (GPU when present)", sample_rate="16 kHz", max_audio="whole clip", packages=("torch", "scipy"),
              extra="detect",
              note="sound-event detector trained on the library's own mixtures + the relevance engine on the detected "
                   "events; first use of a library trains its recipe (procedural: ~15 min of CPU; said before it starts, "
                   "then cached; `detect train LIB` trains it ahead)"),
)
