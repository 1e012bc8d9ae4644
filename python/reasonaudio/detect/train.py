"""Training: the frame tagger on generated mixtures, reproducibly, and a recipe's stages around it.

A run is defined by its steps, batch and seed (and the rest of `TrainConfig`): the data order is
the step index (batch k is planned from seed TRAIN_SEED_BASE + seed * 100003 + k), the
augmentation draws come from the same seeds, torch runs with deterministic algorithms and a fixed
thread count, and nothing depends on the wall clock — the same command writes the same model
bytes on CPU. `max_seconds` is only a safety stop, and it fails: a model cut short by machine load
would be a different model. Model selection keeps the checkpoint with the best frame F1 on
mixtures of held-out recordings (detect.library); the record holds the F1 on mixtures of training
recordings and of held-out ones.

`train_recipe` runs a recipe (detect.recipe): one tagger per seed, prototype heads on each, their
ensemble, the pretrained aiSFX head. Taggers and the aiSFX head are cached by their inputs
(library hash and settings), so a recipe run again, or another recipe sharing a stage, reuses it.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from reasonaudio.detect import TRAIN_THREADS, Deterministic, torch_module
from reasonaudio.detect.data import TRAIN_SEED_BASE, VALID_SEED, MixtureSource, library_hash
from reasonaudio.detect.features import FeatureConfig
from reasonaudio.detect.library import library_specs, open_library, open_parts, split_validation
from reasonaudio.detect.model import Detector, NetConfig, PostConfig, build_net, make_front_end
from reasonaudio.detect.postprocess import events_of_clip
from reasonaudio.detect.recipe import STEMS, Recipe, TrainConfig
from reasonaudio.detect.records import LibraryRecord, TrainingRecord
from reasonaudio.errors import UserError
from reasonaudio.io import cache

COLLAR_S = 0.2  # event F1: onset within 200 ms, offset within max(200 ms, 20 % of the event)


SPEC_BANDS, SPEC_FRAMES, SPEC_MASKS = 8, 25, 2


def spec_augment(x, seed: int):
    """Log-mel [B, n_mels, F] with SPEC_MASKS bands of up to SPEC_BANDS channels and SPEC_MASKS
    stretches of up to SPEC_FRAMES frames per clip set to the clip's mean, drawn from `seed`."""
    torch = torch_module()

    rng = np.random.default_rng([seed, 0x5BEC])
    b, m, f = x.shape
    mask = np.zeros((b, m, f), bool)
    for i in range(b):
        for _ in range(SPEC_MASKS):
            w = int(rng.integers(0, SPEC_BANDS + 1))
            a = int(rng.integers(0, max(1, m - w + 1)))
            mask[i, a : a + w, :] = True
            w = int(rng.integers(0, SPEC_FRAMES + 1))
            a = int(rng.integers(0, max(1, f - w + 1)))
            mask[i, :, a : a + w] = True
    fill = x.mean(dim=(1, 2), keepdim=True)
    return torch.where(torch.from_numpy(mask).to(x.device), fill, x)


def frame_f1(probs: np.ndarray, targets: np.ndarray, threshold: float = 0.5) -> float:
    pred = probs >= threshold
    truth = targets >= 0.5
    tp = float((pred & truth).sum())
    return 2 * tp / max(1.0, float(pred.sum() + truth.sum()))


def event_matches(truth: list[tuple[int, float, float]], found: list[tuple[int, float, float]]) -> int:
    """Greedy one-to-one matches of (label, onset, offset): same label, onset within COLLAR_S,
    offset within max(COLLAR_S, 20 % of the true event)."""
    used = [False] * len(found)
    hits = 0
    for lab, on, off in truth:
        tol = max(COLLAR_S, 0.2 * (off - on))
        for k, (flab, fon, foff) in enumerate(found):
            if not used[k] and flab == lab and abs(fon - on) <= COLLAR_S and abs(foff - off) <= tol:
                used[k] = True
                hits += 1
                break
    return hits


def evaluate(net, mel, source: MixtureSource, n_clips: int, batch: int, n_out, frame_s: float, post: PostConfig, device: str) -> dict:
    """Frame F1 (threshold 0.5, raw frames) and event F1 (post-processed events) on n_clips
    un-augmented mixtures of `source` planned from VALID_SEED."""
    torch = torch_module()

    tp = n_pred = n_true = 0.0
    ev_hits = ev_found = ev_true = 0
    for k in range(0, n_clips, batch):
        n = min(batch, n_clips - k)
        waves, targets = source.batch(n, VALID_SEED + k, n_out)
        truth, lengths = source.events(n, VALID_SEED + k)
        with torch.no_grad():
            probs = torch.sigmoid(net(mel(torch.from_numpy(waves).to(device)))).cpu().numpy()
        pred, true = probs >= 0.5, targets >= 0.5
        tp += float((pred & true).sum())
        n_pred += float(pred.sum())
        n_true += float(true.sum())
        for i in range(n):
            j = n_out(int(lengths[i]))
            _, per_t = events_of_clip(probs[i, :, :j].T, frame_s, lengths[i] / source.sr, post, [post.threshold])
            found = [(lab, on, off) for lab, on, off, _ in per_t[0]]
            ev_hits += event_matches(truth[i], found)
            ev_found += len(found)
            ev_true += len(truth[i])
    return {
        "frame_f1": round(2 * tp / max(1.0, n_pred + n_true), 4),
        "event_f1": round(2 * ev_hits / max(1, ev_found + ev_true), 4),
        "clips": n_clips,
    }


BANK_FRAMES = 1024


def background_bank(net, mel, source: MixtureSource, batch: int, n_out, device: str):
    """float16 [BANK_FRAMES, C'] frame embeddings drawn (seeded) from un-augmented training
    mixtures: the negatives against which an enrolled sound's prototype is calibrated."""
    torch = torch_module()

    chunks = []
    with torch.no_grad():
        for k in range(2):
            waves, _ = source.batch(batch, VALID_SEED + 2**19 + k, n_out)
            h = net.features(mel(torch.from_numpy(waves).to(device)))
            chunks.append(h.transpose(1, 2).reshape(-1, h.shape[1]).cpu())
    frames = torch.cat(chunks)
    frames = frames[frames.norm(dim=1) > 0]
    pick = np.random.default_rng(0xBA4C).permutation(len(frames))[:BANK_FRAMES]
    return frames[torch.from_numpy(np.sort(pick))].to(torch.float16).contiguous()


def train(
    library_spec,
    config: TrainConfig | None = None,
    *,
    features: FeatureConfig | None = None,
    device: str = "cpu",
    progress: bool = True,
    log=print,
) -> Detector:
    """Train a detector on mixtures of `library_spec` (one library spec or a list of them).
    The returned detector's `run_info` holds the wall-clock figures, which the model file omits."""
    torch_module()  # before any work: a missing torch is the install hint

    config = config or TrainConfig()
    features = features or FeatureConfig()
    if config.steps < 1 or config.batch < 1:
        raise UserError("--steps and --batch must be at least 1")
    if config.stem not in STEMS:
        raise UserError(f"recipe: stem must be one of {', '.join(STEMS)}, got {config.stem!r}")
    if not 0.0 <= config.dropout < 1.0:
        raise UserError(f"recipe: dropout must be within [0, 1), got {config.dropout}")
    if not 0.0 <= config.overlap_fraction <= 1.0:
        raise UserError(f"recipe: overlap_fraction must be within [0, 1], got {config.overlap_fraction}")
    # training always runs on TRAIN_THREADS threads, whatever REASONAUDIO_TORCH_THREADS says (which
    # detection honours): intra-op parallelism splits the float reductions of convolutions
    # differently, and 1 and 2 threads gave different weights (measured), so a fixed count is
    # what makes the bytes independent of the machine
    with Deterministic(TRAIN_THREADS):
        return _train(library_spec, config, features, device, progress, log)


def _train(library_spec, config: TrainConfig, features: FeatureConfig, device: str, progress: bool, log) -> Detector:
    torch = torch_module()

    torch.manual_seed(config.seed)
    library, had_split, origins = open_parts(library_spec, features.sample_rate, config.labels)
    label_names = list(dict.fromkeys(library.labels))
    valid_seed = config.seed if config.valid_seed is None else config.valid_seed
    train_lib, valid_lib, held_out = split_validation(library, library_spec, config.valid_fraction, valid_seed, origins)
    aug = config.augment
    source = MixtureSource(train_lib, hop_out=2 * features.hop, labels=label_names, overlap_fraction=config.overlap_fraction)
    seen = MixtureSource(train_lib, hop_out=2 * features.hop, labels=label_names)
    unseen = MixtureSource(valid_lib, hop_out=2 * features.hop, labels=label_names) if valid_lib is not None else None
    net_cfg = NetConfig(n_labels=len(label_names), n_mels=features.n_mels, channels=config.channels,
                        dropout=config.dropout, stem=config.stem)
    mel = make_front_end(net_cfg, features, device)

    def n_out(n_samples: int) -> int:
        return (mel.n_frames(n_samples) + 1) // 2

    net = build_net(net_cfg).to(device)
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=config.lr, weight_decay=1e-4)
    with torch.no_grad():  # start at the prior of a rare label, not at 0.5 everywhere
        net.head.bias.fill_(-5.0)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    post = PostConfig()
    frame_s = 2 * features.frame_s
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    losses: list[float] = []
    clips_seen = 0
    audio_s = 0.0
    checks = sorted({max(1, round(config.steps * (i + 1) / max(1, config.checks))) for i in range(max(1, config.checks))})
    history: list[dict] = []
    best: tuple[float, int, dict] | None = None
    for step in range(config.steps):
        if config.max_seconds is not None and time.perf_counter() - t0 > config.max_seconds:
            raise UserError(
                f"training passed its --max-seconds {config.max_seconds:g} safety stop after {step} of {config.steps} steps; "
                "no model written (a run cut by the clock would depend on machine load): lower --steps or raise --max-seconds"
            )
        done = step / config.steps  # warm-up then cosine decay, by steps only
        for group in opt.param_groups:
            group["lr"] = config.lr * min(1.0, done / 0.05) * 0.5 * (1 + np.cos(np.pi * done))
        net.train()
        waves, targets = source.batch(config.batch, TRAIN_SEED_BASE + config.seed * 100_003 + step, n_out, config.crop_s,
                                      augment=aug if aug.enabled else None)
        x = mel(torch.from_numpy(waves).to(device))
        if config.spec_augment:
            x = spec_augment(x, TRAIN_SEED_BASE + config.seed * 100_003 + step)
        logits = net(x)
        target = torch.from_numpy(targets).to(device)
        loss = loss_fn(logits, target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        clips_seen += len(waves)
        audio_s += waves.shape[1] * len(waves) / features.sample_rate
        if progress and ((step + 1) % 50 == 0 or step == 0):
            log(f"step {step + 1}/{config.steps}  loss {np.mean(losses[-50:]):.4f}  {time.perf_counter() - t0:.0f} s")
        if step + 1 in checks:
            net.eval()
            check = {"step": step + 1}
            if unseen is not None:
                check["held_out"] = evaluate(net, mel, unseen, config.valid_clips, config.batch, n_out, frame_s, post, device)
            history.append(check)
            score = check["held_out"]["frame_f1"] if unseen is not None else float(step + 1)
            if best is None or score > best[0]:  # ties keep the earlier checkpoint
                best = (score, step + 1, {k: v.detach().cpu().clone() for k, v in net.state_dict().items()})
            if progress and unseen is not None:
                log(f"  check at step {step + 1}: held-out recordings frame F1 {check['held_out']['frame_f1']}, "
                    f"event F1 {check['held_out']['event_f1']}")
    train_s = time.perf_counter() - t0
    assert best is not None
    net.load_state_dict(best[2])
    net.eval()
    valid_train = evaluate(net, mel, seen, config.valid_clips, config.batch, n_out, frame_s, post, device)
    background = background_bank(net, mel, seen, config.batch, n_out, device)
    valid_held = evaluate(net, mel, unseen, config.valid_clips, config.batch, n_out, frame_s, post, device) if unseen is not None else None
    record = TrainingRecord(
        config=config.to_dict(),
        steps_done=config.steps,
        selected_step=best[1],
        clips_seen=clips_seen,
        audio_hours_seen=round(audio_s / 3600, 2),
        final_loss=round(float(np.mean(losses[-50:])), 5),
        # mixtures of the recordings the tagger trained on (new arrangements, un-augmented)
        valid_train_recordings=valid_train,
        # mixtures of recordings it never heard (see held_out_recordings)
        valid_held_out_recordings=valid_held,
        held_out_recordings=held_out,
        checks=tuple(history),
        seeds=f"train {TRAIN_SEED_BASE} + seed*100003 + step, valid {VALID_SEED} + k",
        device=device,
        deterministic=True,  # torch.use_deterministic_algorithms, TRAIN_THREADS threads
    )
    detector = Detector(
        labels=label_names,
        phrases=[library.phrases[library.labels.index(label)] for label in label_names],
        features=features,
        net_config=net_cfg,
        state_dict={k: v.detach().cpu() for k, v in net.state_dict().items()},
        library=LibraryRecord(
            spec=library_specs(library_spec)[0] if len(library_specs(library_spec)) == 1 else tuple(library_specs(library_spec)),
            hash=library_hash(library),
            n_atoms=len(library),
            n_train_atoms=len(train_lib),
            sample_rate=library.sample_rate,
            atom_ids=tuple(library.atom_ids),
            label_atom_ids=tuple(library.atom_ids[library.labels.index(label)] for label in label_names),
            valid_atom_ids=tuple(valid_lib.atom_ids) if valid_lib is not None and library_specs(library_spec) != ["procedural"] else (),
            # a library with a split trains on its `train` exemplars (open_library); else all train
            exemplar_split="train" if had_split else None,
        ),
        training=record,
        post=post,
        background=background,
    )
    detector.run_info = {"train_seconds": round(train_s, 1), "train_cpu_seconds": round(time.process_time() - cpu0, 1),
                         "torch_threads": torch.get_num_threads()}
    return detector


def cache_dir() -> Path:
    return cache.cache_dir("detect")


def cache_path(library_spec, config: TrainConfig) -> Path:
    library = open_library(library_spec, FeatureConfig().sample_rate, config.labels)
    return cache_dir() / f"{library_hash(library)[:16]}-{config.key()}.pt"


def train_cached(library_spec, config: TrainConfig | None = None, *, device: str = "cpu", progress: bool = True, log=print) -> tuple[Detector, Path]:
    """Load the model trained for this library and config, or train and store it."""
    config = config or TrainConfig()
    path = cache_path(library_spec, config)
    if path.is_file():
        return Detector.load(path), path
    detector = train(library_spec, config, features=FeatureConfig(), device=device, progress=progress, log=log)
    detector.save(path)
    return detector, path


def recipe_path(library_spec, recipe: Recipe, seed: int, labels: int | None, aisfx: bool) -> Path:
    """The cached model of a whole recipe run (a single tagger without stages: the tagger's own file)."""
    configs = [replace(c, labels=labels) for c in recipe.configs(seed)]
    if len(configs) == 1 and not recipe.prototypes and not (recipe.aisfx and aisfx):
        return cache_path(library_spec, configs[0])
    library = open_library(library_spec, FeatureConfig().sample_rate, labels)
    stages = {"taggers": [c.key() for c in configs], "prototypes": recipe.prototypes, "aisfx": recipe.aisfx if aisfx else None}
    key = hashlib.sha256(json.dumps(stages, sort_keys=True).encode()).hexdigest()[:12]
    return cache_dir() / f"{library_hash(library)[:16]}-{recipe.name}-{key}.pt"


def aisfx_available() -> bool:
    from reasonaudio.detect.pretrained import available

    return available()


def train_recipe(library_spec, recipe: Recipe, *, seed: int = 0, labels: int | None = None, max_seconds: float | None = None,
                 device: str = "cpu", progress: bool = True, log=print) -> Detector:
    """The detector a recipe describes: one tagger per seed (cached by library and config when the
    recipe has further stages), prototype heads on each, their ensemble, the aiSFX head (cached by
    its inputs; left out, with one line saying so, when aisfx is not installed)."""
    from reasonaudio.detect.ensemble import combine

    configs = [replace(c, labels=labels, max_seconds=max_seconds) for c in recipe.configs(seed)]
    staged = len(configs) > 1 or recipe.prototypes is not None or recipe.aisfx is not None
    specs = library_specs(library_spec)
    spec = specs[0] if len(specs) == 1 else specs
    with_aisfx = recipe.aisfx is not None and aisfx_available()
    if recipe.aisfx is not None and not with_aisfx:  # said even when quiet: the model is not what the recipe names
        print(f"recipe {recipe.name}: the pretrained aiSFX head is left out (aisfx is not installed: pip install --no-deps aisfx); "
              "the model has the rest of the recipe", file=sys.stderr)
    seconds, cpu = 0.0, 0.0
    taggers = []
    for k, config in enumerate(configs):
        if staged:
            if progress and len(configs) > 1:
                log(f"tagger {k + 1} of {len(configs)} (seed {config.seed})")
            tagger, _ = train_cached(spec, config, device=device, progress=progress, log=log)
        else:
            tagger = train(spec, config, device=device, progress=progress, log=log)
        seconds += tagger.run_info.get("train_seconds", 0.0)
        cpu += tagger.run_info.get("train_cpu_seconds", 0.0)
        if recipe.prototypes is not None:
            from reasonaudio.detect.prototypes import build

            tagger = build(tagger, spec, include_valid=recipe.prototypes["include_valid"], device=device)
        taggers.append(tagger)
    model = combine(taggers) if len(taggers) > 1 else taggers[0]
    if with_aisfx:
        from reasonaudio.detect.aisfx_heads import AisfxHead, HeadConfig, build_head

        settings = recipe.aisfx
        head = build_head(model, spec, include_valid=settings["include_valid"], progress=progress, cache=True, log=log,
                          config=HeadConfig(mixtures=settings["mixtures"], epochs=settings["epochs"]))
        model = model.replaced(aisfx=AisfxHead(**head, weight=float(settings["weight"])))
    if staged:
        model = model.replaced(training=replace(model.training, recipe=recipe.name))
    model.run_info = {**taggers[0].run_info, "train_seconds": round(seconds, 1), "train_cpu_seconds": round(cpu, 1)} if seconds else {}
    return model


def recipe_cached(library_spec, recipe: Recipe, *, device: str = "cpu", progress: bool = True, log=print) -> tuple[Detector, Path]:
    """The recipe's model from the user's cache, or trained (announced in one line) and stored there."""
    specs = library_specs(library_spec)
    path = recipe_path(library_spec, recipe, 0, None, recipe.aisfx is not None and aisfx_available())
    if path.is_file():
        return Detector.load(path), path
    shown = " ".join(specs)
    log(f"training the detector for {shown} (recipe {recipe.name}: {recipe.description}); about {recipe.minutes} min of CPU "
        f"for one core; cached at {path}. To train it ahead: reasonaudio detect train {shown} --recipe {recipe.command or recipe.name}")
    detector = train_recipe(library_spec, recipe, device=device, progress=progress, log=log)
    detector.save(path)
    return detector, path


def detector_for(spec: str, *, device: str = "cpu", progress: bool = True, log=print) -> tuple[Detector, Path]:
    """The detector `spec` names: a model file, or the cached (else trained, announced) model of a
    library's `auto` recipe. The one path of `detect run LIB` and `--model detect:LIB`, so both get
    what `detect train LIB` trains."""
    from reasonaudio.detect import check_model_or_library
    from reasonaudio.detect import recipe as recipes

    check_model_or_library(spec)
    if Path(spec).is_file():
        return Detector.load(spec), Path(spec)
    return recipe_cached(spec, recipes.load("auto", [spec]), device=device, progress=progress, log=log)
