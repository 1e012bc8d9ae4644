"""Ensembles of taggers: the mean of several taggers' trained-label probabilities.

Taggers trained with other seeds err on different clips; the cost is one forward pass per tagger
at detection time. The members must share what makes their outputs comparable: the vocabulary,
the features, the post-processing and the training library. Prototype heads belong to a tagger's
own embedding space, so they are built on each member before the ensemble; labels enrolled later
are scored by the first member only. A stage of the `recordings` recipe (`[ensemble] taggers`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from reasonaudio.detect.model import Detector
from reasonaudio.errors import UserError


def _taggers(detector: Detector) -> list[Detector]:
    """The taggers of a model: itself and its members, each without members."""
    return [replace(detector, members=[]), *detector.members]


def combine(detectors: list[Detector], names: list[str | Path] | None = None) -> Detector:
    """One model averaging the trained-label probabilities of every tagger of `detectors`
    (ensembles are flattened); the first one's record and settings describe the file."""
    if len(detectors) < 2:
        raise ValueError("an ensemble needs at least two taggers")
    names = names if names is not None else [f"tagger {k}" for k in range(len(detectors))]
    first, first_name = detectors[0], names[0]
    for detector, name in zip(detectors, names):
        if detector.enrolled:
            raise UserError(f"{name}: has enrolled labels; ensemble the trained models first, then `detect enrol` the result")
        if detector.aisfx:
            raise UserError(f"{name}: has the aiSFX head; ensemble the taggers first, then add the head")
        for what, mine, theirs in (
            ("labels", detector.labels, first.labels),
            ("phrases", detector.phrases, first.phrases),
            ("features", detector.features, first.features),
            ("post-processing", detector.post, first.post),
            ("training library (hash)", detector.library.hash, first.library.hash),
        ):
            if mine != theirs:
                raise UserError(f"{name}: its {what} differ from {first_name}'s; an ensemble's taggers must share them")
    taggers = [t for d in detectors for t in _taggers(d)]
    head = taggers[0]
    rest = [replace(t, training=replace(t.training, ensemble_member=True)) for t in taggers[1:]]
    training = replace(head.training, ensemble={"taggers": len(taggers), "seeds": [t.training.config.get("seed") for t in taggers]})
    return replace(head, members=rest, training=training)
