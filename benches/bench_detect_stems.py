"""What each tagger stem costs, against the 1-D stem measured in the same run.

    python benches/bench_detect_stems.py [--steps 8] [--batch 16] [--labels 200] [--seconds 10]

Times, on one torch thread as `detect train` runs, a training step (forward, backward, Adam) and a
detection forward pass of each stem of `detect.model.STEMS` on a batch of log-mel inputs of 10-s
clips (the network's cost does not depend on what the frames hold), and prints seconds per batch
with the ratio to the 1-D stem. The stems' accuracy is in docs/detect.md; this is their price.
The mixing and the augmentation cost the same for every stem and are not timed here, so a whole
training run's ratio is smaller than the network's.

The front ends are timed apart, on the same batch as waveforms: the log-mel one every model uses
and, where the aisfx wheel is installed (`pip install --no-deps aisfx`), the pretrained aiSFX CNN
(`--front-end aisfx`), which runs frozen beside it, so its cost adds to every training step and
every detection batch.
"""

from __future__ import annotations

import argparse
import json
import time
from statistics import median

from reasonaudio.detect import torch_module
from reasonaudio.detect.features import FeatureConfig
from reasonaudio.detect.model import STEMS, NetConfig, build_net


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=8, help="timed batches per stem (after one warm-up)")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--labels", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=10.0, help="clip length")
    args = ap.parse_args()
    torch = torch_module()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    features = FeatureConfig()
    frames = int(round(args.seconds / features.frame_s))
    x = torch.randn(args.batch, features.n_mels, frames)
    rows = {}
    for stem in STEMS:
        net = build_net(NetConfig(n_labels=args.labels, n_mels=features.n_mels, stem=stem))
        optimiser = torch.optim.Adam(net.parameters(), lr=1e-3)
        train_s, detect_s = [], []
        for step in range(args.steps + 1):
            t = time.perf_counter()
            net.train()
            loss = torch.sigmoid(net(x)).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            if step:
                train_s.append(time.perf_counter() - t)
            net.eval()
            t = time.perf_counter()
            with torch.no_grad():
                net(x)
            if step:
                detect_s.append(time.perf_counter() - t)
        rows[stem] = {"train_step_s": median(train_s), "detect_batch_s": median(detect_s),
                      "parameters": sum(p.numel() for p in net.parameters())}
    base = rows["1d"]
    print(f"batch of {args.batch} clips of {args.seconds:g} s, {args.labels} labels, one thread; median of {args.steps} batches")
    print(f"{'stem':<12} {'train step':>11} {'x 1d':>6} {'detect':>9} {'x 1d':>6} {'weights':>9}")
    for stem, r in rows.items():
        print(f"{stem:<12} {r['train_step_s']:>10.3f}s {r['train_step_s'] / base['train_step_s']:>6.2f} "
              f"{r['detect_batch_s']:>8.3f}s {r['detect_batch_s'] / base['detect_batch_s']:>6.2f} {r['parameters']:>9,}")
    fronts = time_front_ends(torch, features, args)
    if fronts:
        base_fe = fronts["log-mel"]
        print(f"{'front end':<12} {'per batch':>11} {'x log-mel':>10} {'CPU s per 10 s of audio':>24}")
        for name, sec in fronts.items():
            print(f"{name:<12} {sec:>10.3f}s {sec / base_fe:>10.1f} {sec / args.batch * 10 / args.seconds:>24.3f}")
    print(json.dumps({"stems": rows, "front_ends_s": fronts}))
    return 0


def time_front_ends(torch, features, args) -> dict[str, float]:
    """Median seconds per batch of waveforms of each front end available here (one thread)."""
    from reasonaudio.detect.features import LogMel

    wave = torch.randn(args.batch, int(args.seconds * features.sample_rate)) * 0.05
    fronts = {"log-mel": LogMel(features)}
    try:
        from reasonaudio.detect.pretrained import AisfxFrontEnd

        fronts["aiSFX"] = AisfxFrontEnd(features).embed
    except Exception as err:  # noqa: BLE001 - the optional wheel is absent: say so, time the rest
        print(f"aiSFX front end not timed: {err}")
    out = {}
    for name, front in fronts.items():
        times = []
        for step in range(args.steps + 1):
            t = time.perf_counter()
            with torch.no_grad():
                front(wave)
            if step:
                times.append(time.perf_counter() - t)
        out[name] = median(times)
    return out


if __name__ == "__main__":
    raise SystemExit(main())
