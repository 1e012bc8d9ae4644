"""Throughput of clip synthesis: the Rust engine against its write floor, a plain numpy mixer and
(when given a Scaper environment) Scaper, all measured in the same run.

    python benches/bench_synth.py [--clips N] [--rounds R] [--scaper-python PATH] [--scaper-clips M]

One run builds a synthetic atom bank (200 atoms of 0.5-4 s) and a plan of 10-s clips at 16 kHz with
2-8 events each (looped, trimmed and native events, overlapping at random), then times, interleaved
round by round (A B C ... A B C ...), min and median over the rounds:
  * write floor       writing the same bytes per file (tmp + rename), no synthesis at all, 1 thread
  * rust, 1 thread    render_corpus(..., threads=1): mix + limit + 16-bit WAV encode + write
  * rust, 2 threads   the same with threads=2 (must not be slower than 1 thread)
  * numpy + soundfile the same plan semantics in numpy, written with soundfile (PCM_16)
  * Scaper            only with --scaper-python (a python with scaper installed): the same events
                      per clip (same atoms as files, onsets, durations, gains as SNR against a
                      fixed reference), 16-bit WAV, timed inside that python around generate()
and a one-thread profile of the rust path split into mix + limit (render_clip), encode
(encode_audio) and the write floor. Ratios: rust(1 thread) / write floor (goal <= 1.5),
rust(2 threads) / rust(1 thread), numpy / rust, Scaper / rust. The load average is printed with
every set of figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
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


SCAPER_SCRIPT = r"""
import json, sys, time, warnings
import scaper

spec = json.load(open(sys.argv[1]))
warnings.filterwarnings("ignore")


def clip(i, out):
    sc = scaper.Scaper(spec["clip_s"], spec["fg"], spec["bg"], random_state=0)
    sc.sr = spec["sr"]
    sc.ref_db = spec["ref_db"]
    sc.n_channels = 1
    for label, source, onset_s, duration_s, snr in spec["clips"][i]:
        sc.add_event(label=("const", label), source_file=("const", source), source_time=("const", 0.0),
                     event_time=("const", onset_s), event_duration=("const", duration_s), snr=("const", snr),
                     pitch_shift=None, time_stretch=None)
    sc.generate(f"{out}/s{i:05d}.wav", f"{out}/s{i:05d}.jams", disable_sox_warnings=True, no_audio=False,
                fix_clipping=True, peak_normalization=False, quick_pitch_time=True, save_isolated_events=False)


clip(0, spec["out"])  # warm-up: imports, caches
t = time.perf_counter()
for i in range(len(spec["clips"])):
    clip(i, spec["out"])
print(json.dumps({"seconds": time.perf_counter() - t, "clips": len(spec["clips"]), "version": scaper.__version__}))
"""


def scaper_setup(root: Path, audio: np.ndarray, offsets: np.ndarray, plan: dict[str, np.ndarray], n_clips: int) -> Path:
    """Atoms as files in Scaper's foreground layout (one label folder per atom), and the first
    n_clips clips' events: same atom, onset and duration (Scaper does not loop a source, so an
    event longer than its atom plays the atom once), gain as SNR in dB against ref_db."""
    import json

    fg, bg = root / "fg", root / "bg"
    (bg / "none").mkdir(parents=True)
    sources = []
    for a in range(len(offsets) - 1):
        folder = fg / f"atom{a:03d}"
        folder.mkdir(parents=True)
        path = folder / f"atom{a:03d}.wav"
        sf.write(path, audio[offsets[a]:offsets[a + 1]], SR, subtype="PCM_16")
        sources.append(str(path))
    sf.write(bg / "none" / "silence.wav", np.zeros(SR, np.float32), SR, subtype="PCM_16")
    clips = []
    for c in range(n_clips):
        s = plan["ev_clip"] == c
        events = []
        for a, o, n, g in zip(plan["ev_atom"][s], plan["ev_onset"][s], plan["ev_length"][s], plan["ev_gain_db"][s]):
            atom_s = (int(offsets[a + 1]) - int(offsets[a])) / SR
            events.append((f"atom{int(a):03d}", sources[int(a)], int(o) / SR, min(int(n) / SR, atom_s), float(g)))
        clips.append(events)
    out = root / "out"
    out.mkdir()
    spec = root / "spec.json"
    spec.write_text(json.dumps({"clip_s": CLIP_S, "sr": SR, "ref_db": -20, "fg": str(fg), "bg": str(bg),
                                "out": str(out), "clips": clips}))
    (root / "run_scaper.py").write_text(SCAPER_SCRIPT)
    return spec


def run_scaper(python: str, spec: Path) -> tuple[float, int, str]:
    import json
    import subprocess

    done = subprocess.run([python, str(spec.parent / "run_scaper.py"), str(spec)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"--scaper-python {python}: the Scaper run failed:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["seconds"], result["clips"], result["version"]


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clips", type=int, default=500, help="number of 10-s clips (default 500)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--numpy-clips", type=int, default=None,
                    help="clips for the slower numpy baseline (default: min(clips, 100))")
    ap.add_argument("--scaper-python", default=None, help="a python with scaper installed: adds the Scaper comparison")
    ap.add_argument("--scaper-clips", type=int, default=30, help="clips Scaper renders per round (default 30)")
    ap.add_argument("--out", type=Path, default=None, help="scratch directory (default: a temp dir)")
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    audio, offsets = synthetic_bank(rng)
    plan = synthetic_plan(rng, args.clips, len(offsets) - 1)
    clip_len = CLIP_S * SR
    n_np = min(args.clips, args.numpy_clips or 100)
    n_sc = min(args.clips, args.scaper_clips)

    root = Path(tempfile.mkdtemp(prefix="bench_synth_", dir=args.out))
    try:
        dirs = {name: root / name for name in ("rust1", "rust2", "numpy", "raw")}
        for d in dirs.values():
            d.mkdir()
        paths = {name: [str(d / f"clip{i:06d}.wav") for i in range(args.clips)] for name, d in dirs.items()}
        spec = scaper_setup(root / "scaper", audio, offsets, plan, n_sc) if args.scaper_python else None

        bank = _core.AudioBank(audio, offsets)
        mixer = _core.Mixer(SR, fade_ms=FADE_MS, crossfade_ms=CROSSFADE_MS, ceiling=CEILING)

        def corpus(p: dict[str, np.ndarray]) -> _core.Corpus:
            cols = {k: v for k, v in p.items() if k != "clip_lengths"}
            return _core.Corpus(bank, _core.EventTable(**cols, clip_length=p["clip_lengths"]))

        def one_clip(ev: dict[str, np.ndarray]) -> _core.Corpus:
            return _core.Corpus(bank, _core.EventTable(**ev, clip_length=np.array([clip_len], np.int64)))

        def rust(threads: int, name: str) -> None:
            _core.render_corpus(corpus(plan), paths[name], mixer, format="wav16", threads=threads)

        # Warm the allocator and file system on two clips so the first timed run is not penalised.
        _core.render_corpus(corpus(head(plan, 2)), paths["rust1"][:2], _core.Mixer(SR))
        file_bytes = os.path.getsize(paths["rust1"][0])
        np_plan = head(plan, n_np)
        bounds = np.searchsorted(plan["ev_clip"], np.arange(args.clips + 1))
        clip_events = [{k: plan[k][bounds[c]:bounds[c + 1]] for k in ("ev_atom", "ev_onset", "ev_length", "ev_gain_db")}
                       for c in range(args.clips)]
        rendered: list[np.ndarray] = []

        def mix_only() -> None:
            rendered.clear()
            for ev in clip_events:
                rendered.append(_core.render_clip(one_clip(ev), mixer)["audio"])

        def encode_only() -> None:
            for x in rendered:
                _core.encode_audio(x, SR, "wav16")

        # per clip: (name, clips per run, fn); each round runs every case once, in this order
        cases = [
            ("write floor (same bytes, 1 thread)", args.clips, lambda: raw_write(paths["raw"], file_bytes)),
            ("rust, 1 thread", args.clips, lambda: rust(1, "rust1")),
            ("rust, 2 threads", args.clips, lambda: rust(2, "rust2")),
            ("  profile: mix + limit (render_clip)", args.clips, mix_only),
            ("  profile: 16-bit WAV encode", args.clips, encode_only),
            ("numpy + soundfile", n_np, lambda: np_render_corpus(audio, offsets, np_plan, paths["numpy"][:n_np])),
        ]
        times: dict[str, list[float]] = {name: [] for name, _, _ in cases}
        sc_times: list[float] = []
        sc_version = ""
        print(f"job: {args.clips} clips x {CLIP_S} s at {SR} Hz, {len(plan['ev_clip'])} events "
              f"({len(plan['ev_clip']) / args.clips:.1f}/clip), 200 atoms, wav16 ({file_bytes} bytes/clip); "
              f"{os.cpu_count()} CPUs; {args.rounds} rounds interleaved; {load()}")
        for _ in range(args.rounds):
            for name, n, fn in cases:
                times[name].append(timed(fn) / n)
            if spec is not None:
                seconds, n, sc_version = run_scaper(args.scaper_python, spec)
                sc_times.append(seconds / n)
        after = load()

        identical = all(Path(a).read_bytes() == Path(b).read_bytes()
                        for a, b in zip(paths["rust1"], paths["rust2"]))
        # The baseline must compute the same mix, or the comparison means nothing.
        s = plan["ev_clip"] == 0
        ref = _core.render_clip(one_clip({k: plan[k][s] for k in ("ev_atom", "ev_onset", "ev_length", "ev_gain_db")}),
                                _core.Mixer(SR))["audio"]
        alt = np_render_clip(audio, offsets, plan["ev_atom"][s], plan["ev_onset"][s], plan["ev_length"][s],
                             plan["ev_gain_db"][s], clip_len)
        max_diff = float(np.abs(ref - alt).max())
    finally:
        shutil.rmtree(root, ignore_errors=True)

    if sc_times:
        times[f"Scaper {sc_version} ({n_sc} clips)"] = sc_times
    print(f"{'per clip':<40}{'min ms':>10}{'median ms':>11}")
    for name, ts in times.items():
        print(f"{name:<40}{1000 * min(ts):>10.3f}{1000 * statistics.median(ts):>11.3f}")
    print(f"after: {after}")

    def ratio(a: str, b: str) -> str:
        ta, tb = times[a], times[b]
        return f"min {min(ta) / min(tb):.2f}x, median {statistics.median(ta) / statistics.median(tb):.2f}x"

    floor, r1, r2 = "write floor (same bytes, 1 thread)", "rust, 1 thread", "rust, 2 threads"
    print(f"rust(1 thread) / write floor:   {ratio(r1, floor)}  (goal <= 1.5x)")
    print(f"rust(2 threads) / rust(1 thread): {ratio(r2, r1)}  (per clip; <= 1 means 2 threads are not slower)")
    print(f"numpy + soundfile / rust(1 thread): {ratio('numpy + soundfile', r1)}")
    if sc_times:
        print(f"Scaper / rust(1 thread): {ratio(f'Scaper {sc_version} ({n_sc} clips)', r1)}  (same events per clip, 16-bit WAV)")
    else:
        print("Scaper: not run (give --scaper-python PATH, a python with scaper installed)")
    mix, enc, w = (statistics.median(times[k]) for k in ("  profile: mix + limit (render_clip)", "  profile: 16-bit WAV encode", floor))
    total = statistics.median(times[r1])
    print(f"where rust(1 thread) goes (medians): mix + limit {1000 * mix:.3f} ms, encode {1000 * enc:.3f} ms, "
          f"write {1000 * w:.3f} ms; sum {1000 * (mix + enc + w):.3f} ms vs {1000 * total:.3f} ms measured")
    print(f"checks: 1 vs 2 threads byte-identical: {identical}; numpy baseline vs rust mix max |diff| = {max_diff:.2e}")


if __name__ == "__main__":
    main()
