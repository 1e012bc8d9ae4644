"""Typed stubs of the Rust extension (rust/python), one section per core module.

Checked against the built module by `python -m mypy.stubtest reasonaudio._core` (CI). Errors are the
classes of `reasonaudio.errors`, by kind (each also the builtin named in brackets): PlanError,
LogicError/EventError/AnnotateError, MixError [ValueError], ColumnTypeError [TypeError],
AudioWriteError [OSError], ResampleError, AtomError [ValueError]. Ctrl-C during procedural_atoms,
plan_corpus, annotate_csr, render_corpus or canonical_rank stops the call and raises KeyboardInterrupt.
"""

import typing as _typing
from os import PathLike as _PathLike

import numpy as _np
import numpy.typing as _npt

__version__: str
__all__ = [
    "AudioBank",
    "Beds",
    "ClipRequest",
    "Corpus",
    "EventLabels",
    "EventTable",
    "Mixer",
    "Rooms",
    "Scene",
    "UnitRows",
    "PITCH_MAX_CENTS",
    "SNR_HEADROOM_DB",
    "SPEED_DEN",
    "STRETCH_DEN",
    "STRETCH_MAX",
    "STRETCH_MIN",
    "TEXTURE_RMS",
    "__version__",
    "annotate_csr",
    "canonical_pair_scores",
    "canonical_rank",
    "convolve",
    "encode_audio",
    "finish_atom",
    "plan_clip",
    "plan_corpus",
    "plan_params_check",
    "plan_params_default",
    "procedural_atoms",
    "render_clip",
    "render_corpus",
    "resample",
    "unit_norms",
    "unit_rows_f32",
    "room_prepare",
    "room_tail_s",
    "scene_noise",
    "speed_for_semitones",
    "speed_info",
    "speed_len",
    "shift_stretch",
    "stretch_len",
    "varispeed",
]

# --- render ------------------------------------------------------------------------------------
# Value objects are built once and checked when made: columns must be contiguous 1-D arrays of
# exactly these dtypes (ColumnTypeError otherwise) and agree with each other (MixError naming the
# column, row or clip). Arrays are kept without copies; a render borrows them read-only and checks
# every event and every clip's scene again (MixError naming the clip/row); encoding and file-system
# failures raise AudioWriteError.

@_typing.final
class AudioBank:
    """Flat float32 audio of n sources (atoms, beds or rooms) and offsets[n + 1]."""

    def __new__(cls, audio: _npt.NDArray[_np.float32], offsets: _npt.NDArray[_np.uint64]) -> AudioBank: ...
    def __len__(self) -> int: ...

@_typing.final
class EventTable:
    """A plan's events, sorted by clip (then onset), and every clip's length in samples."""

    def __new__(
        cls,
        *,
        ev_atom: _npt.NDArray[_np.uint32],
        ev_onset: _npt.NDArray[_np.int64],
        ev_length: _npt.NDArray[_np.int64],
        ev_gain_db: _npt.NDArray[_np.float32],
        clip_length: _npt.NDArray[_np.int64],
        ev_clip: _npt.NDArray[_np.uint32] | None = None,
    ) -> EventTable:
        """ev_clip=None: every event belongs to clip 0 (one clip)."""
    @property
    def n_clips(self) -> int: ...
    @property
    def n_events(self) -> int: ...

@_typing.final
class Beds:
    """Bed sources (unit level) and per clip: bed index (-1: none), start sample in the bed's loop,
    target SNR in dB."""

    def __new__(
        cls,
        bank: AudioBank,
        *,
        clip_bed: _npt.NDArray[_np.int32],
        clip_bed_start: _npt.NDArray[_np.int64],
        clip_snr_db: _npt.NDArray[_np.float32],
    ) -> Beds: ...

@_typing.final
class Rooms:
    """Prepared responses (room_prepare) and per clip the room index (-1: dry)."""

    def __new__(cls, bank: AudioBank, *, clip_room: _npt.NDArray[_np.int32]) -> Rooms: ...

@_typing.final
class Scene:
    """Beds, rooms and per-event speed (over SPEED_DEN), pitch shift (cents) and stretch (over
    STRETCH_DEN, applied after the varispeed); an absent part, or an empty column, is "none"."""

    def __new__(
        cls,
        *,
        beds: Beds | None = None,
        rooms: Rooms | None = None,
        ev_speed: _npt.NDArray[_np.uint32] | None = None,
        ev_pitch_cents: _npt.NDArray[_np.int32] | None = None,
        ev_stretch: _npt.NDArray[_np.uint32] | None = None,
    ) -> Scene: ...

@_typing.final
class Corpus:
    """Atoms, events and a scene (None: the clean mixer; a clip without bed, room or speed change
    renders the clean mixer's bytes)."""

    def __new__(cls, atoms: AudioBank, events: EventTable, scene: Scene | None = None) -> Corpus: ...
    @property
    def n_clips(self) -> int: ...

@_typing.final
class Mixer:
    """Sample rate, fade at each event's edges, crossfade at a loop's seam, the limiter's ceiling."""

    def __new__(cls, sample_rate: int, *, fade_ms: float = 5.0, crossfade_ms: float = 50.0, ceiling: float = 0.98) -> Mixer: ...
    @property
    def sample_rate(self) -> int: ...

def render_corpus(
    corpus: Corpus,
    paths: list[str | _PathLike[str]],
    mixer: Mixer,
    *,
    format: str = "wav16",
    threads: int = 0,
    sha256: bool = False,
    atomic: bool = True,
) -> dict[str, _npt.NDArray[_np.float32] | list[str]]:
    """Render every clip and write paths[i] (via paths[i].tmp; atomic=False: straight to paths[i],
    for a staged output directory renamed into place whole).

    format: "wav16" | "wav_f32" | "flac16". threads=0: all cores. Returns {"peak" (before the
    limiter), "gain" (the limiter's), "bed_gain"} per clip and {"ev_snr_db"} per event (+inf
    without a bed), and with sha256=True "sha256": the hex sha256 of every file's bytes (hashed in
    memory before the write, in the render threads). Output bytes do not depend on threads."""

def render_clip(corpus: Corpus, mixer: Mixer, clip: int = 0, *, stems: bool = False) -> dict[str, _typing.Any]:
    """Clip `clip`: {"audio" (limited), "peak", "gain", "bed_gain", "ev_snr_db"}, and with stems=True
    "events" (n_events x clip length, each event's own wet signal before the limiter) and "bed" (at
    its gain, before the limiter)."""

def encode_audio(samples: _npt.NDArray[_np.float32], sample_rate: int, format: str = "wav16") -> bytes:
    """A whole audio file in memory ("wav16" | "wav_f32" | "flac16"): the bytes render_corpus writes."""
# --- annotate ---

@_typing.final
class EventLabels:
    """Labelled events: per event its clip, label (an index into `labels`), onset and offset in
    ticks (`rate` ticks per second), over `n_clips` clips; column lengths checked when made."""

    def __new__(
        cls,
        *,
        clip: _npt.NDArray[_np.uint32],
        label: _npt.NDArray[_np.uint32],
        onset: _npt.NDArray[_np.int64],
        offset: _npt.NDArray[_np.int64],
        n_clips: int,
        rate: float,
        labels: list[str],
    ) -> EventLabels: ...

def annotate_csr(
    events: EventLabels,
    logic_json: list[str],
    query_ids: list[str] | None = None,
    threads: int = 0,
) -> tuple[_npt.NDArray[_np.uint64], _npt.NDArray[_np.uint32]]:
    """Relevant (query, clip) pairs as CSR: query q's clips are clip_indices[indptr[q]:indptr[q+1]],
    ascending. Raises LogicError naming the query and constraint (malformed logic), EventError naming
    the event row (bad events)."""
# --- rank ---
# The canonical score of reasonaudio.retrieval.index: float64 unit vectors (norms from unit_norms),
# products summed in dimension order with separate IEEE multiplies and adds. Rows are C-contiguous
# float32; bad shapes or non-finite values raise ValueError.

def unit_norms(x: _npt.NDArray[_np.float32]) -> _npt.NDArray[_np.float64]:
    """Canonical norms of the rows: sqrt of the squares summed in dimension order."""

def unit_rows_f32(x: _npt.NDArray[_np.float32], norms: _npt.NDArray[_np.float64]) -> _npt.NDArray[_np.float32]:
    """The canonical unit rows rounded once to float32 (zero rows stay zero)."""

@_typing.final
class UnitRows:
    """Float32 rows [n, d] (C-contiguous) with their canonical norms (unit_norms): a ranking's
    queries or clips, checked when made."""

    def __new__(cls, rows: _npt.NDArray[_np.float32], norms: _npt.NDArray[_np.float64]) -> UnitRows: ...
    def __len__(self) -> int: ...

def canonical_pair_scores(
    queries: UnitRows,
    clips: UnitRows,
    query_rows: _npt.NDArray[_np.int64],
    clip_rows: _npt.NDArray[_np.int64],
    threads: int = 0,
) -> _npt.NDArray[_np.float64]:
    """Canonical scores of the pairs (query_rows[i], clip_rows[i])."""

def canonical_rank(
    queries: UnitRows,
    clips: UnitRows,
    k: int,
    target_scores: _npt.NDArray[_np.float64] | None = None,
    target_clips: _npt.NDArray[_np.int64] | None = None,
    threads: int = 0,
) -> tuple[_npt.NDArray[_np.float64], _npt.NDArray[_np.int64], _npt.NDArray[_np.int64]]:
    """(scores [nq, k], clips [nq, k], outranking [nq]): each query's first k positions by
    canonical score descending, then clip index ascending (k >= the corpus size: complete
    rankings). With targets, outranking[i] counts the clips that outrank (target_scores[i],
    target_clips[i]) in query i's complete ranking, else 0."""

# --- resample ---

def resample(x: _npt.NDArray[_np.float32], sr_in: int, sr_out: int) -> _npt.NDArray[_np.float32]:
    """Band-limited, delay-compensated resampling; returns round(len(x) * sr_out / sr_in) samples."""
# --- plan ---
def plan_params_default() -> str:
    """Default planner parameters as JSON."""

def plan_params_check(params_json: str, n_atoms: int) -> tuple[str, list[float]]:
    """Validate planner parameters; returns them normalised and the robust duration thresholds (s)."""

def plan_corpus(
    native_lengths: _npt.NDArray[_np.int64],
    n_clips: int,
    overlap_fraction: float,
    seed: int,
    params_json: str,
    threads: int = 0,
    start: int = 0,
    stop: int | None = None,
) -> dict[str, _npt.NDArray]:
    """Seeded plans of clips [start, stop) of an `n_clips` corpus (all of it by default) as
    columns: clip_event_ptr, ev_clip, ev_atom, ev_onset, ev_length, ev_gain_db, ev_mode (0 native,
    1 loop, 2 trim), clip_length, clip_overlap. A range's plans are those the whole corpus gives
    them, its clip indices and event pointers counted from `start`. Raises PlanError."""

@_typing.final
class ClipRequest:
    """What one clip planned on purpose must hold; PlanError when made for an atom required twice,
    one both required and excluded, required_bins neither empty nor one per required atom, or
    overlap_first_pair with fewer than two required atoms."""

    def __new__(
        cls,
        *,
        required: list[int] = ...,
        ordered: bool = False,
        excluded: list[int] = ...,
        required_bins: list[int | None] = ...,
        overlap_first_pair: bool = False,
        n_events: int | None = None,
    ) -> ClipRequest: ...
    @property
    def required(self) -> list[int]: ...
    @property
    def ordered(self) -> bool: ...
    @property
    def excluded(self) -> list[int]: ...
    @property
    def required_bins(self) -> list[int | None]: ...
    @property
    def overlap_first_pair(self) -> bool: ...
    @property
    def n_events(self) -> int | None: ...

def plan_clip(
    native_lengths: _npt.NDArray[_np.int64],
    params_json: str,
    request: ClipRequest,
    *,
    pattern: str,
    seed: int,
    key: int,
) -> dict[str, _npt.NDArray]:
    """Plan one clip from (seed, key) in `pattern` ("sequential" | "overlap") under `request` (same
    columns as plan_corpus). Raises PlanError."""

# --- procedural atoms ---
def procedural_atoms(
    sample_rate: int, seed: int = 0
) -> tuple[list[str], list[str], list[str], _npt.NDArray[_np.float32], _npt.NDArray[_np.uint64]]:
    """The embedded 200-atom library: (labels, phrases, families, flat audio, offsets[n+1]).

    Seed 0 is the default library; other seeds re-render random details (noise, hit timing)."""

def finish_atom(x: _npt.NDArray[_np.float32], sample_rate: int) -> _npt.NDArray[_np.float32]:
    """DC removal, 5 ms edge fades, RMS normalised to -20 dBFS, peaks limited to 0.9."""

# --- scene (contract §5) ----------------------------------------------------------------------
# Beds are unit-level sources; the renderer picks ONE bed gain per clip so that every event's
# 10*log10(E_event / E_bed) over its dry extent is >= snr_db + SNR_HEADROOM_DB (E_event: the
# event's own signal after gain, speed and room). Rooms are responses prepared by room_prepare.
# Speeds are integers over SPEED_DEN (pitch and tempo together: varispeed); independent pitch
# shifts are whole cents (|c| <= PITCH_MAX_CENTS) and stretches integers over STRETCH_DEN in
# [STRETCH_MIN, STRETCH_MAX] (Signalsmith Stretch). Bad inputs: MixError.

SPEED_DEN: int
STRETCH_DEN: int
STRETCH_MIN: int
STRETCH_MAX: int
PITCH_MAX_CENTS: int
SNR_HEADROOM_DB: float
TEXTURE_RMS: float

def scene_noise(kind: str, n: int, seed: int, key: int) -> _npt.NDArray[_np.float32]:
    """n samples of "white" | "pink" | "brown" noise from (seed, key); zero mean, RMS TEXTURE_RMS."""

def room_prepare(ir: _npt.NDArray[_np.float32]) -> _npt.NDArray[_np.float32]:
    """Align at the direct path (first sample within 20 dB of the peak), cut after a 60 dB
    Schroeder decay, scale to unit energy."""

def room_tail_s(ir: _npt.NDArray[_np.float32], sample_rate: int) -> float:
    """Seconds until the Schroeder energy decay falls 20 dB (contract §5's tail_s)."""

def convolve(x: _npt.NDArray[_np.float32], ir: _npt.NDArray[_np.float32]) -> _npt.NDArray[_np.float32]:
    """Full linear FFT convolution: len(x) + len(ir) - 1 samples (0 if either is empty)."""

def speed_for_semitones(semitones: float) -> int | None:
    """Speed numerator (over SPEED_DEN) nearest to a pitch shift; None if not finite or beyond an octave."""

def speed_info(k: int) -> tuple[float, float]:
    """(pitch_semitones, stretch) rendered by speed k."""

def speed_len(n: int, k: int) -> int:
    """round(n * SPEED_DEN / k), ties to even: the length of n samples at speed k."""

def varispeed(x: _npt.NDArray[_np.float32], k: int) -> _npt.NDArray[_np.float32]:
    """x played at speed k / SPEED_DEN: exactly speed_len(len(x), k) samples."""

def shift_stretch(x: _npt.NDArray[_np.float32], cents: int, stretch: int, sample_rate: int) -> _npt.NDArray[_np.float32]:
    """x transposed by `cents` (length kept) and stretched by stretch / STRETCH_DEN (pitch kept),
    through Signalsmith Stretch: exactly stretch_len(len(x), stretch) samples; deterministic."""

def stretch_len(n: int, stretch: int) -> int:
    """round(n * stretch / STRETCH_DEN), ties to even: the length of n samples stretched."""
