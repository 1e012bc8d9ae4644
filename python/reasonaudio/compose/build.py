"""Build a two-segment compositional diagnostic set: audio/*.wav, metadata.jsonl, manifest.json.

A sample is [segment 1][exactly 1.5 s of digital silence][segment 2]. Each segment carries one value
of the cue (a background sound mixed at an SNR, the speaker's gender, or the speaker's emotion) and
its own downstream content (a sentence to transcribe, an arithmetic question, a factual question).
The two segments' cue values differ, so the segment a cue points to is unique.

Balance is built from blocks of four samples over one unordered pair of cue values {a, b} (and, for
the environment cue, one SNR): (target a, first), (target a, second), (target b, first),
(target b, second). Every block has the target first exactly twice and uses each of its two values
exactly twice as target and twice as distractor; a cycle of blocks over every pair (and SNR) makes
all values equally frequent. n must be a multiple of 4; a multiple of the cycle length balances
values and SNRs exactly as well (the manifest reports the counts either way).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from reasonaudio.compose import content as content_mod
from reasonaudio.compose.content import CONTENT_TASKS, Item
from reasonaudio.compose.io import FINGERPRINT
from reasonaudio import _core
from reasonaudio.compose.mixing import (
    GAP_SECONDS, LOOP_CROSSFADE_S, PEAK_CEILING, SPEECH_RMS_DBFS, gap_samples, rms,
    set_rms, trim_silence,
)
from reasonaudio.compose.speech import RecordingSource, Segment, TtsSource, to_rate
from reasonaudio.contract import MAX_SAMPLE_RATE, MIN_SAMPLE_RATE
from reasonaudio.errors import UserError
from reasonaudio.io.outputs import MARKER, InputFolder, output_directory

CUES = ("environment", "gender", "emotion")
SET_FORMAT_VERSION = 1  # of a compose set (its own layout, not the benchmark contract)
# The study's five environment classes (rain, crickets, wind, sea waves, birds). Each class lists
# labels to take as they are, best first (the procedural library's and ESC-50-style names), then
# words that may end a label (its head noun), for other imported libraries.
DEFAULT_BACKGROUNDS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("rain_light", "rain_heavy", "rain"), ("rain",)),
    (("crickets", "cricket"), ("crickets", "cricket")),
    (("wind_howl_low", "wind"), ("wind",)),
    (("ocean_waves", "sea_waves", "waves"), ("waves", "sea", "ocean", "surf")),
    (("bird_trill", "chirping_birds", "bird_chirps", "birds"), ("birds", "bird", "birdsong")),
)


class BackgroundLibrary(Protocol):
    labels: Sequence[str]
    phrases: Sequence[str]
    sample_rate: int

    def audio(self, i: int) -> np.ndarray: ...


SNR_RANGE_DB = (-30.0, 60.0)


@dataclass
class ComposeConfig:
    cue: str = "environment"
    task: str = "asr"
    n: int = 600
    snrs: tuple[float, ...] = (0.0, 10.0, 20.0)
    sample_rate: int = 24000
    seed: int = 0
    cue_values: tuple[str, ...] | None = None
    math_levels: tuple[int, ...] = (1, 2, 3)
    speech: str = "tts"
    atoms: str = "procedural"
    facts: str | None = None
    builtin_facts: bool = True


@dataclass
class CueValue:
    value: str
    phrase: str
    atom: int | None = None


def choose_backgrounds(library: BackgroundLibrary, wanted: Sequence[str] | None) -> list[CueValue]:
    labels = list(library.labels)
    phrases = list(getattr(library, "phrases", labels)) or labels
    if wanted:
        out = []
        for w in wanted:
            if w not in labels:
                raise UserError(f"background {w!r} is not a label of the atom library; labels include "
                                f"{', '.join(labels[:12])}{' ...' if len(labels) > 12 else ''}")
            i = labels.index(w)
            out.append(CueValue(w, phrases[i], i))
    else:
        out = []
        lowered = [label.lower() for label in labels]
        for exact, words in DEFAULT_BACKGROUNDS:
            taken = {c.atom for c in out}
            found = next((lowered.index(e) for e in exact if e in lowered and lowered.index(e) not in taken), None)
            if found is None:
                # the head noun of an English compound comes last: "strong_wind" is wind, "wind_chimes" is not
                found = next(
                    (i for i, label in enumerate(lowered) if i not in taken and label.split("_")[-1] in words),
                    None,
                )
            if found is not None:
                out.append(CueValue(labels[found], phrases[found], found))
        if len(out) < 2:
            raise UserError("the atom library has fewer than two labels matching the default backgrounds "
                            "(rain, crickets, wind, sea waves, birds); pass --cue-values LABEL LABEL ...")
    if len({c.value for c in out}) != len(out):
        raise UserError("--cue-values lists a background twice")
    return out


def balanced_plan(values: Sequence[str], n: int, snrs: Sequence[float | None], seed: int) -> list[dict[str, Any]]:
    if n <= 0 or n % 4:
        raise UserError(f"--n must be a positive multiple of 4 (target position and each value's "
                        f"target/distractor roles are balanced in blocks of 4), got {n}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x5EED]))
    pairs = [(a, b, snr) for a, b in itertools.combinations(values, 2) for snr in snrs]
    blocks: list[tuple[str, str, float | None]] = []
    while len(blocks) * 4 < n:
        cycle = list(pairs)
        order = rng.permutation(len(cycle))
        blocks.extend(cycle[i] for i in order)
    plan: list[dict[str, Any]] = []
    for a, b, snr in blocks[: n // 4]:
        for target, distractor in ((a, b), (b, a)):
            for position in (1, 2):
                plan.append({"target_value": target, "distractor_value": distractor,
                             "target_segment": position, "snr_db": snr})
    order = rng.permutation(len(plan))
    return [plan[i] for i in order]


def plan_counts(plan: list[dict[str, Any]]) -> dict[str, Any]:
    def count(key: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for row in plan:
            k = str(row[key])
            out[k] = out.get(k, 0) + 1
        return dict(sorted(out.items()))
    return {"target_segment": count("target_segment"), "target_value": count("target_value"),
            "distractor_value": count("distractor_value"), "snr_db": count("snr_db")}


def _content_fn(cfg: ComposeConfig, facts: list[Item]) -> Callable[[np.random.Generator], Item]:
    if cfg.task == "asr":
        return lambda rng: (lambda t: Item(t, (t,), None, "builtin"))(
            content_mod.SENTENCES[int(rng.integers(len(content_mod.SENTENCES)))])
    if cfg.task == "math":
        levels = cfg.math_levels
        return lambda rng: content_mod.math_item(rng, levels[int(rng.integers(len(levels)))])
    return lambda rng: facts[int(rng.integers(len(facts)))]


def make_source(cfg: ComposeConfig):
    if cfg.speech == "tts":
        return TtsSource(cfg.sample_rate)
    return RecordingSource(cfg.speech, cfg.sample_rate)


def load_library(spec: str, sample_rate: int) -> BackgroundLibrary:
    try:
        from reasonaudio.atoms import AtomLibrary
    except ImportError:
        raise UserError("this build of reasonaudio has no atom library module (reasonaudio.atoms)") from None
    if spec == "procedural":
        return AtomLibrary.procedural(sample_rate=sample_rate)
    return AtomLibrary.load(spec, sample_rate=sample_rate)


def wav_bytes(x: np.ndarray, sample_rate: int) -> bytes:
    """16-bit PCM WAV bytes by the core's writer (the same encoder as the benchmark's audio)."""
    return _core.encode_audio(np.ascontiguousarray(x, dtype=np.float32), int(sample_rate), "wav16")


def build_set(out: str | Path, cfg: ComposeConfig, *, source=None, library: BackgroundLibrary | None = None,
          force: bool = False, progress: bool = False) -> dict[str, Any]:
    """Write the set into `out` (through a temporary sibling renamed into place) and return the manifest."""
    out = Path(out)
    if cfg.cue not in CUES:
        raise UserError(f"--cue must be one of {', '.join(CUES)}, got {cfg.cue!r}")
    if cfg.task not in CONTENT_TASKS:
        raise UserError(f"--task must be one of {', '.join(CONTENT_TASKS)}, got {cfg.task!r}")
    if not MIN_SAMPLE_RATE <= cfg.sample_rate <= MAX_SAMPLE_RATE:
        raise UserError(f"--sample-rate must be within {MIN_SAMPLE_RATE}..{MAX_SAMPLE_RATE} Hz, got {cfg.sample_rate}")
    for snr in cfg.snrs:
        # beyond these the mix is either only background or a background below 16-bit resolution
        if not (math.isfinite(snr) and SNR_RANGE_DB[0] <= snr <= SNR_RANGE_DB[1]):
            raise UserError(f"--snr must be finite dB within {SNR_RANGE_DB[0]:g}..{SNR_RANGE_DB[1]:g}, got {snr}")
    if cfg.n < 1:
        raise UserError(f"--n must be at least 1, got {cfg.n}")
    from reasonaudio.io.outputs import check_directory

    check_directory(out, "compose set", force)  # up front; checked again under the lock
    source = source if source is not None else make_source(cfg)
    source.supports_task(cfg.task)

    facts: list[Item] = []
    if cfg.task == "facts":
        if cfg.builtin_facts:
            facts.extend(content_mod.builtin_facts())
        if cfg.facts:
            facts.extend(content_mod.load_facts(cfg.facts))
        if len(facts) < 2:
            raise UserError("the facts task needs at least two questions")

    if cfg.cue == "environment":
        library = library if library is not None else load_library(cfg.atoms, cfg.sample_rate)
        cue_values = choose_backgrounds(library, cfg.cue_values)
        snrs: list[float | None] = [float(s) for s in cfg.snrs]
        if not snrs:
            raise UserError("--snr needs at least one value")
        backgrounds = {c.value: to_rate(np.asarray(library.audio(c.atom), dtype=np.float32),
                                        int(library.sample_rate), cfg.sample_rate) for c in cue_values}
    else:
        available = source.cue_values(cfg.cue)
        chosen = list(cfg.cue_values) if cfg.cue_values else available
        unknown = [v for v in chosen if v not in available]
        if unknown:
            raise UserError(f"cue values {unknown} are not provided by the speech source (it has {available})")
        cue_values = [CueValue(v, v) for v in chosen]
        snrs = [None]
        backgrounds = {}
    if len(cue_values) < 2:
        raise UserError("the cue needs at least two distinct values")
    phrase = {c.value: c.phrase for c in cue_values}
    plan = balanced_plan([c.value for c in cue_values], cfg.n, snrs, cfg.seed)
    content = _content_fn(cfg, facts)
    gap = gap_samples(cfg.sample_rate)

    inputs = [p for p in (cfg.speech, cfg.atoms, cfg.facts) if p and Path(p).exists()]
    with output_directory(out, "compose set", inputs=inputs, force=force) as tmp:
        (tmp / "audio").mkdir()
        rows = []
        audio_digest = hashlib.sha256()
        iterator = enumerate(plan)
        if progress:
            from reasonaudio.console import progress_bar as tqdm
            iterator = tqdm(iterator, total=len(plan), desc="compose build", unit="sample")
        for index, cell in iterator:
            row, audio = _make_sample(index, cell, cfg, source, content, backgrounds, phrase, gap)
            data = wav_bytes(audio, cfg.sample_rate)
            (tmp / row["audio"]).write_bytes(data)
            row["audio_sha256"] = hashlib.sha256(data).hexdigest()
            audio_digest.update(row["audio_sha256"].encode())
            rows.append(row)
        meta = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows).encode()
        (tmp / "metadata.jsonl").write_bytes(meta)
        params = asdict(cfg)
        params["snrs"] = list(cfg.snrs) if cfg.cue == "environment" else None
        manifest = {
            "format": "reasonaudio-compose", "format_version": SET_FORMAT_VERSION,
            "params": params, "n_samples": len(rows), "gap_seconds": GAP_SECONDS, "gap_samples": gap,
            "speech_rms_dbfs": SPEECH_RMS_DBFS, "speech_source": source.name,
            "cue_values": [asdict(c) for c in cue_values],
            "counts": plan_counts(plan),
            "hashes": {"metadata.jsonl": hashlib.sha256(meta).hexdigest(), "audio": audio_digest.hexdigest()},
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return manifest


def mix_sample(speeches: list[np.ndarray], noises: list[np.ndarray | None], snr_db: float | None, gap: int,
               sample_rate: int) -> tuple[np.ndarray, list[tuple[int, int]], float]:
    """[segment 1][gap of exact silence][segment 2], each segment its speech plus (environment cue)
    its background fitted to the segment and scaled to `snr_db` by RMS, limited by one gain for
    the whole sample so the SNR and the balance of the segments are kept. Placement, looping with
    crossfades, gains, sum and limiter are the Rust core's mixer (the benchmark's own); no fades at
    event edges, so the gap stays exact zeros. Returns (audio, segment bounds, limiter gain)."""
    starts = [0, speeches[0].size + gap]
    bounds = [(starts[0], speeches[0].size), (starts[1], starts[1] + speeches[1].size)]
    length = bounds[1][1]
    bank = [np.ascontiguousarray(x, dtype=np.float32) for x in speeches]
    events: list[tuple[int, int, int, float]] = [(0, starts[0], speeches[0].size, 0.0), (1, starts[1], speeches[1].size, 0.0)]
    for k, noise in enumerate(noises):
        if noise is None:
            continue
        if noise.size == 0:
            raise UserError("a background sound is empty")
        bank.append(np.ascontiguousarray(noise, dtype=np.float32))
        atom, n = len(bank) - 1, speeches[k].size
        fitted = _mix(bank, [(atom, 0, n, 0.0)], n, sample_rate, ceiling=1.0)[0]
        level = rms(fitted)
        if level == 0.0:
            raise UserError("a background sound is silent; it cannot be mixed at an SNR")
        target = rms(speeches[k]) / (10.0 ** (float(snr_db) / 20.0))
        events.append((atom, starts[k], n, float(20.0 * np.log10(target / level))))
    audio, _, gain = _mix(bank, events, length, sample_rate, ceiling=PEAK_CEILING)
    return audio, bounds, float(gain)


def _mix(bank: list[np.ndarray], events: list[tuple[int, int, int, float]], length: int, sample_rate: int,
         ceiling: float) -> tuple[np.ndarray, float, float]:
    offsets = np.concatenate([[0], np.cumsum([x.size for x in bank])]).astype(np.uint64)
    atom, onset, size, gain_db = zip(*events)
    events = _core.EventTable(ev_atom=np.asarray(atom, np.uint32), ev_onset=np.asarray(onset, np.int64),
                              ev_length=np.asarray(size, np.int64), ev_gain_db=np.asarray(gain_db, np.float32),
                              clip_length=np.array([length], np.int64))
    mixer = _core.Mixer(int(sample_rate), fade_ms=0.0, crossfade_ms=LOOP_CROSSFADE_S * 1000.0, ceiling=ceiling)
    out = _core.render_clip(_core.Corpus(_core.AudioBank(np.concatenate(bank).astype(np.float32), offsets), events), mixer)
    return out["audio"], out["peak"], out["gain"]


def _make_sample(index: int, cell: dict[str, Any], cfg: ComposeConfig, source, content, backgrounds: dict,
                 phrase: dict[str, str], gap: int) -> tuple[dict[str, Any], np.ndarray]:
    rng = np.random.default_rng(np.random.SeedSequence([cfg.seed, index + 1]))
    target = cell["target_segment"]
    values = [cell["target_value"], cell["distractor_value"]]
    if target == 2:
        values.reverse()
    avoid: set[str] = set()
    segments: list[Segment] = []
    speeches: list[np.ndarray] = []
    noises: list[np.ndarray | None] = []
    seg_rows: list[dict[str, Any]] = []
    for k, value in enumerate(values, 1):
        seg = source.segment(rng, cfg.task, content,
                             gender=value if cfg.cue == "gender" else None,
                             emotion=value if cfg.cue == "emotion" else None, avoid=avoid)
        avoid |= {seg.text, *seg.answers}
        speech = set_rms(trim_silence(seg.audio, cfg.sample_rate), SPEECH_RMS_DBFS)
        background = None
        noise = None
        if cfg.cue == "environment":
            # the background starts at a seeded point of its recording and is looped or cropped
            # to the segment by the core's mixer (below); rotating it here sets that start
            bed = np.asarray(backgrounds[value], dtype=np.float32)
            noise = np.roll(bed, -(int(rng.integers(1 << 30)) % bed.size))
            background = value
        segments.append(seg)
        speeches.append(speech)
        noises.append(noise)
        seg_rows.append({
            "segment": k, "text": seg.text, "answers": list(seg.answers), "gender": seg.gender,
            "emotion": seg.emotion, "speaker": seg.speaker, "background": background,
            "background_phrase": phrase[value] if background else None,
            "snr_db": cell["snr_db"] if background else None, "level": seg.level, "origin": seg.origin,
            "cue_value": value,
        })
    audio, bounds, gain = mix_sample(speeches, noises, cell["snr_db"], gap, cfg.sample_rate)
    for seg_row, (start, end) in zip(seg_rows, bounds):
        seg_row["start_sample"], seg_row["end_sample"] = start, end
    sample_id = f"s{index:05d}"
    row = {
        "id": sample_id, "audio": f"audio/{sample_id}.wav", "cue": cfg.cue, "task": cfg.task,
        "target_segment": target, "target_value": cell["target_value"],
        "target_phrase": phrase[cell["target_value"]], "distractor_value": cell["distractor_value"],
        "snr_db": cell["snr_db"], "sample_rate": cfg.sample_rate, "num_samples": int(audio.size),
        "gain": round(float(gain), 6), "segments": seg_rows,
    }
    return row, audio


def read_dataset(directory: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    directory = Path(directory)
    manifest_path, meta_path = directory / "manifest.json", directory / "metadata.jsonl"
    if not manifest_path.is_file() or not meta_path.is_file():
        raise UserError(f"{directory} is not a compose set (expected manifest.json and metadata.jsonl; "
                        "make one with `reasonaudio compose build`)")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise UserError(f"{manifest_path}: not valid JSON ({err.msg})") from None
    if manifest.get("format") != "reasonaudio-compose":
        raise UserError(f"{manifest_path}: not a reasonaudio compose manifest")
    rows = []
    with meta_path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as err:
                    raise UserError(f"{meta_path}:{lineno}: not valid JSON ({err.msg})") from None
    return manifest, rows


log = logging.getLogger(__name__)


def set_fingerprint(directory: str | Path) -> str:
    """A set's identity: the first 16 hex digits of the sha256 of its metadata.jsonl, which holds
    every sample's content and its audio's sha256 (manifest.json records the whole digest as
    hashes['metadata.jsonl']). Sets built from other seeds, parameters or recordings differ."""
    path = Path(directory) / "metadata.jsonl"
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError as err:
        raise UserError(f"{path}: cannot read ({err.strerror})") from None


def check_fingerprint(rows: Sequence[dict[str, Any]], source: str | Path, directory: str | Path, what: str,
                      remedy: str, other_sets: Sequence[str | Path] = ()) -> None:
    """Refuses `rows` (prompts or outputs read from `source`) made from another set than `directory`;
    rows without a fingerprint (files written before sets had one, or by another program) are
    matched by sample id, with a note."""
    mine = set_fingerprint(directory)
    unmarked = 0
    for i, row in enumerate(rows, 1):
        theirs = row.get(FINGERPRINT)
        if theirs is None:
            unmarked += 1
        elif theirs != mine:
            owner = next((str(d) for d in other_sets if Path(d) != Path(directory) and set_fingerprint(d) == theirs), None)
            whose = f", that of {owner}" if owner else ""
            if owner:
                remedy = "give one --outputs file per set, in the order of the sets"
            raise UserError(f"{source}, row {i}: {what} of another compose set ({FINGERPRINT} {theirs}{whose}), not of "
                            f"{directory} ({FINGERPRINT} {mine}); {remedy}")
    if unmarked:
        log.warning("reasonaudio compose: note: %s: %d of its %d rows carry no %s (written by an older reasonaudio "
                    "or another program), so these %s are matched to %s by sample id only", source, unmarked, len(rows),
                    FINGERPRINT, what, directory)


def set_input(directory: str | Path) -> InputFolder | Path:
    """A set as a command's input: the folder and the files its reader uses (manifest, metadata, the
    output marker and every audio file its metadata names), so an output may be written inside the
    set but never over one of these. A folder that is not a readable set stays a plain input (nothing
    may be written inside it)."""
    directory = Path(directory)
    try:
        _, rows = read_dataset(directory)
    except (UserError, OSError):
        return directory
    own = [directory / "manifest.json", directory / "metadata.jsonl", directory / MARKER]
    own += [directory / r["audio"] for r in rows if isinstance(r.get("audio"), str)]
    return InputFolder(directory, tuple(own))
