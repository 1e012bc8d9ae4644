"""The GPU paths, checked against the CPU: prints figures, asserts nothing.

    python benches/gpu_check.py [--clips 120] [--steps 40] [--keep DIR] [--rank-clips 100000,1000000] [--dim 512]

On a machine with CUDA and PyTorch (a few minutes; budget under 8):

1. `detect train`: seconds per optimiser step of the same small configuration on cpu and on cuda (ratio);
2. `detect run`: one trained detector on the same corpus on cpu and cuda: the events found (count,
   those matched within one frame of onset and offset), the largest presence difference, the speed ratio;
3. one adapter of each paradigm, a tiny random model of each (MLLM embedder, two-stage captioner +
   ranker, CLIP-style, detect-then-reason) evaluated on cuda and on cpu: Avg Acc@1 of both, the largest
   difference between the score of each two-option pair, seconds;
4. certified FAISS on the GPU against the exact kernel: `eval --index faiss --device cuda` on the
   benchmark (rankings and metrics must be identical), then 1,000 queries x `--rank-clips` clips x
   `--dim` dims ranked to depth 100 by both (identical?, seconds, the ratio, the certifier's
   candidate depths); skipped with the reason where FAISS reports no GPU.

Without CUDA (or torch) each GPU measurement is skipped with the reason, and the CPU side still runs, so
the script is checked wherever the project is. The tiny models come from tests/support (the builders
the tests use), so it runs from a source checkout.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = ROOT / "tests" / "support"


def say(text: str) -> None:
    print(text, flush=True)


def load_file(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def cuda_reason() -> str | None:
    """None when a CUDA device is usable, else why not."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    return None


def cli(*argv: str) -> int:
    from reasonaudio.cli import main

    return main(list(argv))


def timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def check_detect(work: Path, bench: Path, steps: int, gpu: str | None) -> Path:
    from reasonaudio.detect.infer import detect
    from reasonaudio.detect.train import TrainConfig, train
    from reasonaudio.io import load_any_benchmark

    config = TrainConfig(steps=steps, batch=8, channels=32, valid_clips=8, checks=1)
    per_step = {}
    detector = None
    for device in ["cpu"] + ([] if gpu else ["cuda"]):
        trained, seconds = timed(lambda d=device: train("procedural", config, device=d, progress=False, log=lambda m: None))
        per_step[device] = seconds / steps
        detector = detector or trained
        say(f"detect train  {device:4s}  {steps} steps  {seconds:7.1f} s  ({1000 * per_step[device]:.0f} ms/step)")
    if gpu:
        say(f"detect train  cuda  skipped: {gpu}")
    else:
        say(f"detect train  cuda/cpu speed ratio  {per_step['cpu'] / per_step['cuda']:.2f}x")
    model = work / "detector.pt"
    detector.save(model)

    benchmark = load_any_benchmark(bench)
    paths, ids = benchmark.audio_paths(), benchmark.clips["clip_id"].cast(str).to_list()
    runs = {}
    for device in ["cpu"] + ([] if gpu else ["cuda"]):
        runs[device], seconds = timed(lambda d=device: detect(detector, paths, ids, device=d, progress=False))
        runs[device + "_s"] = seconds
        say(f"detect run    {device:4s}  {len(ids)} clips  {seconds:7.1f} s  "
            f"{runs[device].events[runs[device].operating].height} events")
    if gpu:
        say(f"detect run    cuda  skipped: {gpu}")
        return model
    import numpy as np

    cpu, cuda = runs["cpu"], runs["cuda"]
    a, b = cpu.events[cpu.operating], cuda.events[cuda.operating]
    frame = cpu.frame_s
    keyed = {}
    for row in a.iter_rows(named=True):
        keyed.setdefault((row["clip"], row["label"]), []).append((row["onset_s"], row["offset_s"]))
    matched = 0
    for row in b.iter_rows(named=True):
        spans = keyed.get((row["clip"], row["label"]), [])
        hit = next((s for s in spans if abs(s[0] - row["onset_s"]) <= frame and abs(s[1] - row["offset_s"]) <= frame), None)
        if hit is not None:
            spans.remove(hit)
            matched += 1
    diff = float(np.abs(cpu.presence - cuda.presence).max()) if cpu.presence.size else 0.0
    say(f"detect run    events cpu {a.height}, cuda {b.height}, matched within one frame ({frame:.3f} s): {matched}; "
        f"largest presence difference {diff:.2e}; cuda/cpu speed ratio {runs['cpu_s'] / runs['cuda_s']:.2f}x")
    return model


def tiny_models(work: Path, sample_rate: int) -> dict[str, str]:
    """One spec per paradigm, each on a tiny random model written here."""
    specs = {}
    try:
        omni = load_file("gpu_check_omni_tiny", SUPPORT / "omni_tiny.py")
        specs["MLLM embedder"] = f"lco-omni:{omni.save_tiny_qwen_omni_thinker(work / 'omni')}"
        qwen = load_file("gpu_check_qwen_tiny", SUPPORT / "qwen_tiny.py")
        specs["two-stage"] = f"two-stage:qwen2audio={qwen.save_tiny_qwen2_audio(work / 'qwen')},max_new_tokens=8+minilm"
        clap = load_file("gpu_check_clap", ROOT / "tests" / "test_adapters_clap.py")
        clap_dir = clap._tiny_clap(work / "clap", sample_rate)
        # the tiny text tower has 64 positions: the tokenizer must cut the benchmark's longer queries there
        config = clap_dir / "tokenizer_config.json"
        config.write_text(json.dumps({**json.loads(config.read_text()), "model_max_length": 60}))
        specs["CLIP-style"] = f"clap:{clap_dir}"
    except BaseException as err:  # pytest's skip (a test file's importorskip) is not an ImportError
        if isinstance(err, (KeyboardInterrupt, SystemExit)):
            raise
        say(f"adapters      tiny models unavailable: {type(err).__name__}: {err}")
    return specs


def check_adapters(bench: Path, specs: dict[str, str], gpu: str | None) -> None:
    import numpy as np

    from reasonaudio.evaluation.run import evaluate
    from reasonaudio.io import load_any_benchmark
    from reasonaudio.retrieval import ModelOptions, load_model

    benchmark = load_any_benchmark(bench)
    for paradigm, spec in specs.items():
        results = {}
        for device in ["cpu"] + ([] if gpu else ["cuda"]):
            try:
                model = load_model(spec, ModelOptions(batch_size=8, device=device, progress=False))
                results[device], seconds = timed(lambda m=model: evaluate(benchmark, m, n_boot=0, progress=False,
                                                                         keep_vectors=False))
            except Exception as err:  # a figure script: report the failure and go on with the others
                say(f"adapter       {paradigm:14s} {device:4s}  failed: {type(err).__name__}: {str(err)[:200]}")
                continue
            acc = 100 * results[device].summary["acc@1"]["Avg"]["mean"]
            say(f"adapter       {paradigm:14s} {device:4s}  Avg Acc@1 {acc:5.1f}%  {seconds:6.1f} s")
        if gpu:
            say(f"adapter       {paradigm:14s} cuda  skipped: {gpu}")
        elif len(results) == 2:
            pairs = [r.two_option_pairs for r in (results["cpu"], results["cuda"])]
            diff = max(float(np.abs(pairs[0][c].to_numpy() - pairs[1][c].to_numpy()).max())
                       for c in ("positive_score", "negative_score")) if pairs[0].height else 0.0
            say(f"adapter       {paradigm:14s} largest two-option score difference cuda vs cpu {diff:.2e}")


def faiss_gpu_reason() -> str | None:
    """None when FAISS can search on a GPU, else why not."""
    if importlib.util.find_spec("faiss") is None:
        return "faiss is not installed (pip install 'reasonaudio[faiss]'; faiss-gpu for CUDA)"
    from reasonaudio.retrieval.certified import faiss_gpus

    if faiss_gpus() == 0:
        return "FAISS reports no GPU (a CPU-only faiss build, or CUDA not visible)"
    return None


def check_faiss(work: Path, bench: Path, rank_clips: list[int], dim: int) -> None:
    """`eval --index faiss --device cuda` against `--index exact` on the benchmark (every output
    file compared), then the rankers alone on random unit embeddings at corpus sizes."""
    import numpy as np
    import polars as pl

    why = faiss_gpu_reason()
    if why is not None:
        say(f"faiss-gpu     skipped: {why}")
        return
    common = ["--model", "random:0", "--bootstrap", "0", "--no-figures", "--quiet"]
    exact, faiss = work / "exact", work / "faiss"
    (_, t_exact), (code, t_faiss) = (timed(lambda: cli("eval", str(bench), "--out", str(exact), *common)),
                                     timed(lambda: cli("eval", str(bench), "--out", str(faiss), "--index", "faiss",
                                                       "--device", "cuda", *common)))
    if code != 0:
        say(f"faiss-gpu     eval --index faiss --device cuda failed (exit {code})")
        return
    same_rankings = pl.read_parquet(exact / "rankings.parquet").equals(pl.read_parquet(faiss / "rankings.parquet"))
    summaries = [json.loads((d / "results.json").read_text())["summary"] for d in (exact, faiss)]
    say(f"faiss-gpu     eval on the benchmark: rankings {'identical' if same_rankings else 'DIFFER'}, metrics "
        f"{'identical' if summaries[0] == summaries[1] else 'DIFFER'} to --index exact; {t_exact:.1f} s vs {t_faiss:.1f} s")

    from reasonaudio.retrieval.certified import CertifiedRanker
    from reasonaudio.retrieval.index import EmbeddingRanker

    def heads(ranker):
        parts = list(ranker.rank(depth=100, batch_size=256))
        return np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts])

    rng = np.random.default_rng(0)
    q = rng.standard_normal((1000, dim), dtype=np.float32)
    for n in rank_clips:
        c = rng.standard_normal((n, dim), dtype=np.float32)
        (s_e, i_e), t_e = timed(lambda c=c: heads(EmbeddingRanker(q, c)))
        ranker = CertifiedRanker(q, c, device="cuda")
        (s_g, i_g), t_g = timed(lambda: heads(ranker))
        same = bool(np.array_equal(i_e, i_g) and np.array_equal(s_e.view(np.int64), s_g.view(np.int64)))
        say(f"faiss-gpu     1000 queries x {n:,} clips x {dim} d, top 100: exact {t_e:.1f} s, certified on cuda "
            f"{t_g:.1f} s ({t_e / max(t_g, 1e-9):.1f}x); {'identical' if same else 'DIFFER'}; {ranker.stats}")
        del c


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=int, default=120, help="clips in the benchmark built for the check (default 120)")
    parser.add_argument("--steps", type=int, default=40, help="detector training steps per device (default 40)")
    parser.add_argument("--keep", type=Path, default=None, help="work in this directory and keep it")
    parser.add_argument("--rank-clips", default="100000,1000000",
                        help="corpus sizes for the FAISS-GPU ranking against the exact kernel (default 100000,1000000)")
    parser.add_argument("--dim", type=int, default=512, help="embedding dimension of that ranking (default 512)")
    args = parser.parse_args(argv)

    gpu = cuda_reason()
    if gpu is None:
        import torch

        say(f"device        cuda: {torch.cuda.get_device_name(0)}; torch {torch.__version__}")
    else:
        say(f"device        no GPU ({gpu}): every cuda measurement below is skipped")
    work = args.keep or Path(tempfile.mkdtemp(prefix="reasonaudio-gpu-check-"))
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    try:
        bench = work / "bench"
        if not (bench / "manifest.json").is_file():
            cli("build", "--out", str(bench), "--clips", str(args.clips), "--quiet")
        if importlib.util.find_spec("torch") is None:
            say("detect        skipped: torch is not installed")
            say("adapters      skipped: torch is not installed")
        else:
            from reasonaudio.io import load_any_benchmark

            detector = check_detect(work, bench, args.steps, gpu)
            specs = tiny_models(work, load_any_benchmark(bench).sample_rate)
            specs["detect-then-reason"] = f"detect:{detector}"
            check_adapters(bench, specs, gpu)
        check_faiss(work, bench, [int(x) for x in args.rank_clips.split(",") if x], args.dim)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    say(f"total         {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
