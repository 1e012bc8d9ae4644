"""Throughput of clip synthesis: the Rust engine against a plain numpy mixer and the raw-write floor.

    python benches/bench_synth.py [--clips N] [--out DIR]

One run builds a synthetic atom bank (200 atoms of 0.5-4 s) and a plan of 10-s clips at 16 kHz with
2-8 events each (looped, trimmed and native events, overlapping at random), then times:
  * rust, 1 thread    render_corpus(..., threads=1): mix + limit + 16-bit WAV write per clip
  * rust, all cores   the same with threads=0
  * numpy + soundfile the same plan semantics in numpy, written with soundfile (PCM_16)
  * raw write floor   writing the same bytes per file (tmp + rename), no synthesis at all
and prints clips/s, samples/s, ms per clip per core and ratios. Goal: <= 2 ms per 10-s clip per core
including the WAV write (Scaper was measured at 144 ms per clip).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from reasonaudio import _core

SR = 16000
CLIP_S = 10
FADE_MS = 5.0
CROSSFADE_MS = 50.0
CEILING = 0.98


def synthetic_bank(rng: np.random.Generator, n_atoms: int = 200) -> tuple[np.ndarray, np.ndarray]:
    atoms = []
    for _ in range(n_atoms):
        n = int(rng.integers(SR // 2, 4 * SR))
        t = np.arange(n) / SR
        tone = np.sin(2 * np.pi * rng.uniform(80, 4000) * t)
        noise = rng.standard_normal(n) * rng.uniform(0, 0.5)
        env = np.exp(-t * rng.uniform(0, 3))
        x = (tone + noise) * env
        atoms.append((0.9 * x / np.abs(x).max()).astype(np.float32))
    offsets = np.cumsum([0] + [len(a) for a in atoms]).astype(np.uint64)
    return np.concatenate(atoms), offsets


def synthetic_plan(rng: np.random.Generator, n_clips: int, n_atoms: int) -> dict[str, np.ndarray]:
    clip_len = CLIP_S * SR
    clip, atom, onset, length, gain = [], [], [], [], []
    for c in range(n_clips):
        k = int(rng.integers(2, 9))
        for o in np.sort(rng.integers(0, clip_len - SR // 2, size=k)):
            clip.append(c)
            atom.append(int(rng.integers(0, n_atoms)))
            onset.append(int(o))
            length.append(int(rng.integers(SR // 2, min(clip_len - o, 6 * SR) + 1)))
            gain.append(float(rng.uniform(-12, 0)))
    return {
        "ev_clip": np.array(clip, np.uint32),
        "ev_atom": np.array(atom, np.uint32),
        "ev_onset": np.array(onset, np.int64),
        "ev_length": np.array(length, np.int64),
        "ev_gain_db": np.array(gain, np.float32),
        "clip_lengths": np.full(n_clips, clip_len, np.int64),
    }


# --- the numpy baseline: same semantics as rust/core/src/mix.rs --------------------------------

def np_render_event(atom: np.ndarray, length: int, fade: int, crossfade: int) -> np.ndarray:
    n = len(atom)
    out = np.empty(length, np.float32)
    first = min(n, length)
    out[:first] = atom[:first]
    if length > n:
        c = min(crossfade, n // 2)
        theta = 0.5 * np.pi * (np.arange(c) + 0.5) / max(c, 1)
        fade_in, fade_out = np.sin(theta).astype(np.float32), np.cos(theta).astype(np.float32)
        period = n - c
        start = period
        while start < length:
            xend = min(start + c, length)
            m = xend - start
            out[start:xend] = out[start:xend] * fade_out[:m] + atom[:m] * fade_in[:m]
            body_end = min(start + n, length)
            if start + c < body_end:
                out[start + c:body_end] = atom[c:body_end - start]
            start += period
    f = min(fade, length // 2)
    if f:
        w = (0.5 - 0.5 * np.cos(np.pi * (np.arange(f) + 1) / (f + 1))).astype(np.float32)
        out[:f] *= w
        out[length - f:] *= w[::-1]
    return out


def np_render_clip(audio: np.ndarray, offsets: np.ndarray, atoms: np.ndarray, onsets: np.ndarray,
                   lengths: np.ndarray, gains_db: np.ndarray, clip_length: int) -> np.ndarray:
    fade = round(FADE_MS * SR / 1000)
    crossfade = round(CROSSFADE_MS * SR / 1000)
    clip = np.zeros(clip_length, np.float32)
    for a, o, n, g in zip(atoms, onsets, lengths, gains_db):
        atom = audio[offsets[a]:offsets[a + 1]]
        gain = np.float32(10 ** (float(g) / 20))
        clip[o:o + n] += gain * np_render_event(atom, int(n), fade, crossfade)
    peak = float(np.abs(clip).max())
    if peak > CEILING:
        clip *= np.float32(CEILING / peak)
    return clip


def np_render_corpus(audio: np.ndarray, offsets: np.ndarray, plan: dict[str, np.ndarray], paths: list[str]) -> None:
    bounds = np.searchsorted(plan["ev_clip"], np.arange(len(paths) + 1))
    for c, path in enumerate(paths):
        s = slice(bounds[c], bounds[c + 1])
        clip = np_render_clip(audio, offsets, plan["ev_atom"][s], plan["ev_onset"][s], plan["ev_length"][s],
                              plan["ev_gain_db"][s], int(plan["clip_lengths"][c]))
        sf.write(path + ".tmp", clip, SR, subtype="PCM_16", format="WAV")
        os.replace(path + ".tmp", path)


def raw_write(paths: list[str], n_bytes: int) -> None:
    payload = bytes(n_bytes)
    for path in paths:
        with open(path + ".tmp", "wb") as f:
            f.write(payload)
        os.replace(path + ".tmp", path)


def head(plan: dict[str, np.ndarray], n_clips: int) -> dict[str, np.ndarray]:
    """The plan of the first n_clips clips."""
    keep = plan["ev_clip"] < n_clips
    out = {k: v[keep] for k, v in plan.items() if k.startswith("ev_")}
    out["clip_lengths"] = plan["clip_lengths"][:n_clips]
    return out


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clips", type=int, default=500, help="number of 10-s clips (default 500)")
    ap.add_argument("--numpy-clips", type=int, default=None,
                    help="clips for the slower numpy baseline (default: min(clips, 200))")
    ap.add_argument("--out", type=Path, default=None, help="scratch directory (default: a temp dir)")
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    audio, offsets = synthetic_bank(rng)
    plan = synthetic_plan(rng, args.clips, len(offsets) - 1)
    clip_len = CLIP_S * SR
    n_np = min(args.clips, args.numpy_clips or 200)

    root = Path(tempfile.mkdtemp(prefix="bench_synth_", dir=args.out))
    try:
        dirs = {name: root / name for name in ("rust1", "rustN", "numpy", "raw")}
        for d in dirs.values():
            d.mkdir()
        paths = {name: [str(d / f"clip{i:06d}.wav") for i in range(args.clips)] for name, d in dirs.items()}

        def rust(threads: int, name: str) -> None:
            _core.render_corpus(audio, offsets, **plan, paths=paths[name], sample_rate=SR, format="wav16",
                                fade_ms=FADE_MS, crossfade_ms=CROSSFADE_MS, ceiling=CEILING, threads=threads)

        # Warm the allocator and file system on two clips so the first timed run is not penalised.
        _core.render_corpus(audio, offsets, **head(plan, 2), paths=paths["rust1"][:2], sample_rate=SR)

        t_rust1 = timed(lambda: rust(1, "rust1"))
        t_rustN = timed(lambda: rust(0, "rustN"))
        np_plan = head(plan, n_np)
        t_np = timed(lambda: np_render_corpus(audio, offsets, np_plan, paths["numpy"][:n_np]))
        file_bytes = os.path.getsize(paths["rust1"][0])
        t_raw = timed(lambda: raw_write(paths["raw"], file_bytes))

        identical = all(Path(a).read_bytes() == Path(b).read_bytes()
                        for a, b in zip(paths["rust1"], paths["rustN"]))
        # The baseline must compute the same mix, or the comparison means nothing.
        s = plan["ev_clip"] == 0
        ref = _core.render_clip(audio, offsets, plan["ev_atom"][s], plan["ev_onset"][s], plan["ev_length"][s],
                                plan["ev_gain_db"][s], clip_len, SR)
        alt = np_render_clip(audio, offsets, plan["ev_atom"][s], plan["ev_onset"][s], plan["ev_length"][s],
                             plan["ev_gain_db"][s], clip_len)
        max_diff = float(np.abs(ref - alt).max())
    finally:
        shutil.rmtree(root, ignore_errors=True)

    cores = os.cpu_count() or 1
    rows = [
        ("rust, 1 thread", args.clips, t_rust1, 1),
        (f"rust, all cores ({cores})", args.clips, t_rustN, cores),
        ("numpy + soundfile", n_np, t_np, 1),
        ("raw write floor", args.clips, t_raw, 1),
    ]
    print(f"job: {args.clips} clips x {CLIP_S} s at {SR} Hz, {len(plan['ev_clip'])} events "
          f"({len(plan['ev_clip']) / args.clips:.1f}/clip), 200 atoms, wav16 ({file_bytes} bytes/clip)")
    print(f"{'engine':<24}{'clips':>7}{'seconds':>10}{'clips/s':>10}{'Msamples/s':>12}{'ms/clip/core':>14}")
    for name, n, t, used_cores in rows:
        print(f"{name:<24}{n:>7}{t:>10.3f}{n / t:>10.1f}{n * clip_len / t / 1e6:>12.1f}"
              f"{1000 * t * used_cores / n:>14.3f}")
    per_clip = {name: t / n for name, n, t, _ in rows}
    r1 = per_clip["rust, 1 thread"]
    print(f"ratios: numpy / rust(1 thread) = {per_clip['numpy + soundfile'] / r1:.1f}x; "
          f"rust(1 thread) / raw floor = {r1 / per_clip['raw write floor']:.2f}x; "
          f"rust(1) / rust(all) = {r1 / per_clip[rows[1][0]]:.2f}x; "
          f"Scaper 144 ms / rust(1 thread) = {0.144 / r1:.0f}x")
    print(f"goal <= 2 ms per 10-s clip per core incl. WAV write: {1000 * r1:.3f} ms "
          f"-> {'met' if r1 <= 0.002 else 'NOT met'}")
    print(f"checks: threads=1 vs all cores byte-identical: {identical}; "
          f"numpy baseline vs rust mix max |diff| = {max_diff:.2e}")


if __name__ == "__main__":
    main()
