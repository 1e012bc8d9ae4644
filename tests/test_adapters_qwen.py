"""The Qwen2-Audio captioner of `two-stage:qwen2audio=DIR+RANKER`, run for real on a tiny random checkpoint.

The checkpoint (`qwen_tiny`) has a real processor and random weights, so its captions are noise; what
is checked is the path: audio read and resampled to the processor's rate, prompt with the audio token,
greedy generation, only the new tokens decoded, left-padded batches, and a complete evaluation.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import soundfile as sf

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from reasonaudio.cli import main  # noqa: E402
from reasonaudio.io.benchmark import load_benchmark  # noqa: E402
from reasonaudio.evaluation.run import evaluate  # noqa: E402
from reasonaudio.retrieval import ClipSet, ModelOptions, load_model  # noqa: E402
from reasonaudio.retrieval.adapters.captioners import Qwen2AudioCaptioner  # noqa: E402


@pytest.fixture(scope="module")
def tiny(qwen_tiny, tmp_path_factory) -> Path:
    return qwen_tiny.save_tiny_qwen2_audio(tmp_path_factory.mktemp("qwen") / "tiny")


@pytest.fixture(scope="module")
def bench_dir(evalfixture, tmp_path_factory) -> Path:
    return evalfixture.write_fixture(tmp_path_factory.mktemp("bench") / "bench", with_beir=False)


def _model(tiny: Path, batch_size: int):
    # a short caption budget keeps the random model's babble (it rarely stops by itself) cheap
    options = ModelOptions(batch_size=batch_size, device="cpu", progress=False, extra={"max_new_tokens": 8})
    return load_model(f"two-stage:qwen2audio={tiny}+bm25", options)


def test_captioner_runs_through_evaluate(evalfixture, tiny: Path, bench_dir: Path) -> None:
    bench = load_benchmark(bench_dir)
    model = _model(tiny, batch_size=3)  # 8 clips: batches of 3, 3, 2
    first = evaluate(bench, model, n_boot=0, progress=False)
    assert first.captions is not None
    assert first.captions["clip_id"].to_list() == list(evalfixture.CLIPS)
    captions = first.captions["caption"].to_list()
    assert all(isinstance(c, str) for c in captions)
    # only the generated tokens are decoded: neither the prompt nor the chat scaffolding comes back
    assert not any(Qwen2AudioCaptioner.INSTRUCTION in c or "assistant\n" in c for c in captions)
    assert first.per_query.height == len(evalfixture.QUERIES)
    assert 0.0 <= first.summary["acc@1"]["Avg"]["mean"] <= 1.0

    again = evaluate(bench, model, n_boot=0, progress=False)
    assert again.captions.equals(first.captions)  # greedy decoding: same text every run
    assert again.rankings.equals(first.rankings)


def test_captioner_resamples_and_pads_batches_on_the_left(tiny: Path, tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    seconds = [1.0, 3.0, 2.0, 0.5]
    paths = []
    for i, length in enumerate(seconds):
        paths.append(tmp_path / f"m{i}.wav")
        sf.write(paths[-1], (0.2 * rng.standard_normal(int(length * 24_000))).astype(np.float32), 24_000)
    clips = ClipSet([f"m{i}" for i in range(len(paths))], paths)

    batched = _model(tiny, batch_size=4).captioner
    assert batched.sample_rate == 16_000
    frames = batched.inputs(paths)["feature_attention_mask"].sum(-1).tolist()
    # Whisper features: 100 frames per second of 16 kHz audio; the 24 kHz files must be resampled first
    assert frames == [int(s * 100) for s in seconds]
    # different lengths give different numbers of audio tokens, so the batch is padded; with the
    # padding on the left, every clip's caption equals the one it gets alone
    single = _model(tiny, batch_size=1).captioner
    assert batched.caption(clips) == single.caption(clips)


def test_eval_writes_captions_that_load_back(evalfixture, tiny: Path, bench_dir: Path, tmp_path: Path) -> None:
    common = ["--bootstrap", "0", "--quiet", "--no-figures", "--device", "cpu"]
    out = tmp_path / "qwen"
    assert main(["eval", str(bench_dir), "--model", f"two-stage:qwen2audio={tiny}+bm25", "--out", str(out), *common]) == 0
    captions = pl.read_parquet(out / "captions.parquet")
    assert captions.columns == ["clip_id", "caption"]
    assert captions["clip_id"].to_list() == list(evalfixture.CLIPS)

    replay = tmp_path / "replay"
    spec = f"two-stage:captions={out / 'captions.parquet'}+bm25"
    assert main(["eval", str(bench_dir), "--model", spec, "--out", str(replay), *common]) == 0
    # the same captions under the same ranker: the same scores, so the same rankings and numbers
    assert pl.read_parquet(replay / "rankings.parquet").equals(pl.read_parquet(out / "rankings.parquet"))
    assert pl.read_parquet(replay / "captions.parquet").equals(captions)
    first, second = (json.loads((d / "results.json").read_text()) for d in (out, replay))
    assert first["summary"] == second["summary"] and first["two_option"] == second["two_option"]


def test_bad_caption_budget_is_a_user_error(tiny: Path) -> None:
    from reasonaudio.errors import UserError

    with pytest.raises(UserError, match="max_new_tokens must be an integer >= 1"):
        load_model(f"two-stage:qwen2audio={tiny}+bm25", ModelOptions(device="cpu", extra={"max_new_tokens": 0}))
