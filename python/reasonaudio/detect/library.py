"""The training library: atom libraries opened at the detector's rate, concatenated, cut, and split
into training recordings and recordings held out for validation.

Validation holds out *recordings*: `valid_fraction` of each label's recordings (labels with two or
more) never train, and model selection (which checkpoint is kept) uses the F1 on mixtures of them.
The procedural library has one recording per label; its held-out recordings are the same recipes
re-synthesised with another noise seed (`_core.procedural_atoms(rate, seed=1)`: other hit timings
and noise, same sound design), a weaker test than other recordings, and said so in the record.
"""

from __future__ import annotations

import os

import numpy as np

from reasonaudio.detect.data import library_hash
from reasonaudio.errors import UserError

PROCEDURAL_VALID_SEED = 1  # noise seed of the re-synthesised procedural variants used as held-out recordings


def trained_library(detector, library_spec, *, include_valid: bool):
    """The training recordings of the library (or libraries) `detector` was trained on, opened at its
    rate, without those held out for validation unless `include_valid`; an error for any other library."""
    n_labels = detector.net_config.n_labels
    library = open_library(library_spec, detector.features.sample_rate, None)
    if library_hash(library) != detector.library.hash:
        # --labels N models are cut to their first N labels; they match the cut library
        trained = [lab for lab in dict.fromkeys(library.labels)][:n_labels]
        library = library.subset([i for i, lab in enumerate(library.labels) if lab in set(trained)])
        if library_hash(library) != detector.library.hash:
            shown = library_spec if isinstance(library_spec, (str, os.PathLike)) else " ".join(map(str, library_spec))
            raise UserError(f"{shown}: not the library this model was trained on (library hash differs; give the libraries of `detect train`, in its order)")
    valid = set(detector.library.valid_atom_ids)
    return library.subset([i for i, a in enumerate(library.atom_ids) if include_valid or a not in valid])




def library_specs(library_spec) -> list[str]:
    specs = [library_spec] if isinstance(library_spec, (str, os.PathLike)) else list(library_spec)
    if not specs:
        raise UserError("detect train: give at least one atom library")
    return [str(s) for s in specs]


def _concat(libraries: list, specs: list[str]):
    """One library of several of one vocabulary (a label's phrase must agree across them)."""
    from reasonaudio.atoms import AtomLibrary

    if len(libraries) == 1:
        return libraries[0]
    ids: list[str] = []
    seen: set[str] = set()
    for k, lib in enumerate(libraries):
        for a in lib.atom_ids:
            name = a if a not in seen else f"lib{k}:{a}"
            seen.add(name)
            ids.append(name)
    chunks = [lib.flat()[0] for lib in libraries]
    sizes = np.concatenate([np.diff(lib.flat()[1].astype(np.int64)) for lib in libraries])
    try:
        return AtomLibrary(
            atom_ids=ids,
            labels=[x for lib in libraries for x in lib.labels],
            phrases=[x for lib in libraries for x in lib.phrases],
            families=[x for lib in libraries for x in lib.families],
            sources=[x for lib in libraries for x in lib.sources],
            licenses=[x for lib in libraries for x in lib.licenses],
            sample_rate=libraries[0].sample_rate,
            audio_flat=np.concatenate(chunks),
            offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.uint64),
        )
    except ValueError as err:
        raise UserError(f"libraries {', '.join(specs)} cannot train one detector: {err}") from None


def open_library(spec, sample_rate: int, labels: int | None = None):
    """The training library (see `open_parts`)."""
    return open_parts(spec, sample_rate, labels)[0]


def open_parts(spec, sample_rate: int, labels: int | None = None):
    """(library, whether a split chose its exemplars, which of the libraries each recording came from).
    The training library: each library's `train` exemplars (all of a library without a split),
    several libraries concatenated, optionally cut to the first `labels` labels."""
    from reasonaudio.atoms import AtomLibrary
    from reasonaudio.atoms.exemplars import select_split

    specs = library_specs(spec)
    parts = []
    had_split = False
    for s in specs:
        library = AtomLibrary.open(s, sample_rate=sample_rate)
        if library.splits:
            had_split = True
            # contract v2: a library with a split trains on its `train` exemplars only, so a benchmark
            # built with --exemplar-split test never lets the detector hear its exact recordings
            library = select_split(library, "train")
        parts.append(library)
    library = _concat(parts, specs)
    origins = [k for k, part in enumerate(parts) for _ in range(len(part))]
    if labels is not None:
        vocab = list(dict.fromkeys(library.labels))
        if not 1 <= labels <= len(vocab):
            raise UserError(f"--labels must be within 1..{len(vocab)}, got {labels}")
        wanted = set(vocab[:labels])
        keep = [i for i, lab in enumerate(library.labels) if lab in wanted]
        library, origins = library.subset(keep), [origins[i] for i in keep]
    return library, had_split, origins


def split_validation(library, spec, fraction: float, seed: int, origins: list[int] | None = None):
    """(training recordings, held-out recordings or None, what "held out" means here).

    Each library of several (`origins[i]`: the library recording i came from) is split on its own,
    with its own stream of the seed: adding a library never changes which recordings of another are
    held out, so a development benchmark built from one library's held-out recordings stays unheard."""
    specs = library_specs(spec)
    if not 0.0 <= fraction < 1.0:
        raise UserError(f"--valid-fraction must be within [0, 1), got {fraction}")
    if fraction == 0.0:
        return library, None, "none (--valid-fraction 0)"
    if specs == ["procedural"]:
        from reasonaudio.atoms import AtomLibrary
        from reasonaudio import _core

        labels, phrases, families, audio, offsets = _core.procedural_atoms(int(library.sample_rate), PROCEDURAL_VALID_SEED)
        keep = [i for i, lab in enumerate(labels) if lab in set(library.labels)]
        full = AtomLibrary(
            atom_ids=[f"atom_{i:03d}_s{PROCEDURAL_VALID_SEED}" for i in range(len(labels))], labels=list(labels), phrases=list(phrases),
            families=list(families), sources=[f"procedural:{f}" for f in families], licenses=["CC0-1.0"] * len(labels),
            sample_rate=library.sample_rate, audio_flat=audio, offsets=offsets,
        )
        return library, full.subset(keep), (
            f"the procedural library has one recording per label: held out = the same recipes re-synthesised with noise "
            f"seed {PROCEDURAL_VALID_SEED} (other hit timings and noise, same sound design); all seed-0 recordings train"
        )
    origins = origins if origins is not None else [0] * len(library)
    held: list[int] = []
    for origin in dict.fromkeys(origins):
        # the first library's stream is the one a single library always had (same held-out recordings)
        rng = np.random.default_rng([seed, 0x7A11D] + ([origin] if origin else []))
        mine = [i for i in range(len(library)) if origins[i] == origin]
        for label in dict.fromkeys(library.labels[i] for i in mine):
            ex = [i for i in mine if library.labels[i] == label]
            if len(ex) >= 2:
                k = min(len(ex) - 1, max(1, int(round(fraction * len(ex)))))
                held.extend(int(i) for i in rng.permutation(ex)[:k])
    if not held:
        return library, None, "none: no label has two training recordings"
    held_set = set(held)
    train_lib = library.subset([i for i in range(len(library)) if i not in held_set])
    valid_lib = library.subset(sorted(held))
    n_labels = len(set(valid_lib.labels))
    return train_lib, valid_lib, (
        f"{len(held)} of the {len(library)} training recordings ({n_labels} labels with two or more, "
        f"{fraction:g} of each, seed {seed}) never trained: mixtures of them validate"
    )
