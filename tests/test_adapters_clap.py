"""The CLAP adapter on a tiny randomly initialised ClapModel saved to disk (no download)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reasonaudio.io.benchmark import load_benchmark
from reasonaudio.errors import UserError
from reasonaudio.evaluation.run import evaluate
from reasonaudio.retrieval import ModelOptions, load_model

transformers = pytest.importorskip("transformers")
pytest.importorskip("torch")
tokenizers = pytest.importorskip("tokenizers")

WORDS = "a dog barking then a rising siren while rain falling without thunder rumbling ringing bell whistle blowing"


def _tiny_clap(root: Path, sample_rate: int) -> Path:
    """A ~100k-parameter CLAP with a byte-level BPE tokenizer trained here on a few words."""
    import torch

    torch.manual_seed(0)
    vocab_dir, model_dir = root / "bpe", root / "clap"
    vocab_dir.mkdir(parents=True)
    bpe = tokenizers.ByteLevelBPETokenizer()
    bpe.train_from_iterator([WORDS] * 3, vocab_size=300, min_frequency=1,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], show_progress=False)
    bpe.save_model(str(vocab_dir))
    tokenizer = transformers.RobertaTokenizer(vocab=str(vocab_dir / "vocab.json"), merges=str(vocab_dir / "merges.txt"))
    extractor = transformers.ClapFeatureExtractor(
        sampling_rate=sample_rate, max_length_s=4, hop_length=160, fft_window_size=400, feature_size=64,
        frequency_max=sample_rate // 2, truncation="rand_trunc",
    )
    config = transformers.ClapConfig(
        text_config=dict(vocab_size=len(tokenizer) + 8, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=37, max_position_embeddings=64, projection_dim=16),
        audio_config=dict(depths=[1, 1], num_attention_heads=[1, 1], hidden_size=32, patch_embeds_hidden_size=16,
                          projection_dim=16, window_size=4, spec_size=256, num_mel_bins=64, enable_fusion=False),
        projection_dim=16,
    )
    transformers.ClapModel(config).save_pretrained(model_dir)
    transformers.ClapProcessor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(model_dir)
    return model_dir


@pytest.fixture(scope="module")
def setup(evalfixture, tmp_path_factory):
    root = tmp_path_factory.mktemp("clap")
    bench = evalfixture.write_fixture(root / "bench", with_beir=False)
    return load_benchmark(bench), _tiny_clap(root, evalfixture.SAMPLE_RATE)


def test_tiny_clap_loads_and_encodes(evalfixture, setup) -> None:
    bench, model_dir = setup
    model = load_model(f"clap:{model_dir}", ModelOptions(batch_size=3, progress=False, device="cpu"))
    assert model.sample_rate == evalfixture.SAMPLE_RATE
    ids = model.processor.tokenizer(["a dog barking"])["input_ids"][0]
    assert len(ids) > 2  # the words reach the model, not only <s> </s>
    text = model.encode_text(["a dog barking", "rain falling", "a dog barking"])
    assert text.shape == (3, 16) and text.dtype == np.float32
    np.testing.assert_allclose(text[0], text[2], atol=1e-6)
    assert not np.allclose(text[0], text[1])
    paths = bench.audio_paths()
    audio = model.encode_audio(paths)
    assert audio.shape == (len(paths), 16)
    # batching does not change a clip's embedding (no random crop, no random is_longer)
    np.testing.assert_allclose(model.encode_audio(paths[4:5])[0], audio[4], atol=1e-5)
    result = evaluate(bench, model, n_boot=0, progress=False)
    assert result.per_query.height == len(evalfixture.QUERIES)


def test_long_clips_are_cropped_to_the_first_window(evalfixture, setup, tmp_path: Path) -> None:
    import soundfile as sf

    _, model_dir = setup
    model = load_model(f"clap:{model_dir}", ModelOptions(progress=False, device="cpu"))
    rng = np.random.default_rng(0)
    head = (0.1 * rng.standard_normal(4 * evalfixture.SAMPLE_RATE)).astype(np.float32)
    sf.write(tmp_path / "short.wav", head, evalfixture.SAMPLE_RATE, subtype="FLOAT")
    sf.write(tmp_path / "long.wav", np.concatenate([head, np.ones(evalfixture.SAMPLE_RATE, np.float32) * 0.5]),
             evalfixture.SAMPLE_RATE, subtype="FLOAT")
    a, b = model.encode_audio([tmp_path / "short.wav", tmp_path / "long.wav"])
    np.testing.assert_allclose(a, b, atol=1e-5)


def test_resampling_needs_the_core(setup, tmp_path: Path) -> None:
    import soundfile as sf

    _, model_dir = setup
    model = load_model(f"clap:{model_dir}", ModelOptions(progress=False, device="cpu"))
    sf.write(tmp_path / "x.wav", np.zeros(8000, np.float32), 8000)
    try:
        from reasonaudio._core import resample  # noqa: F401
    except ImportError:
        with pytest.raises(UserError, match="_core.resample is not available"):
            model.encode_audio([tmp_path / "x.wav"])
    else:
        assert model.encode_audio([tmp_path / "x.wav"]).shape == (1, 16)


def test_missing_clap_directory(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such CLAP model directory"):
        load_model(f"clap:{tmp_path / 'missing'}")
