"""CLIP-style adapters from their own packages' checkpoints (clip_style.py).

Wav2CLIP runs for real: its package's ResNetExtractor is built with random weights and saved in the
released checkpoint's layout (audio_encoder.* / audio_transform.*), and a tiny random CLIPModel with
512-d projections stands in for ViT-B/32's text tower. msclap and laion_clap pin numpy<2 (msclap also
transformers<5), which this project's install cannot take, so their model runs skip where the packages
are absent; their deterministic windowing, checkpoint and option checks run everywhere.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from reasonaudio.errors import UserError
from reasonaudio.retrieval import ModelOptions, load_model
from reasonaudio.retrieval.adapters.clip_style import fixed_window

torch = pytest.importorskip("torch")


def _options(batch_size: int = 4) -> ModelOptions:
    return ModelOptions(batch_size=batch_size, device="cpu", progress=False)


def save_tiny_clip(path: Path) -> Path:
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(["a dog barking then a rising siren while rain falling"] * 10, trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<|startoftext|>", "<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    bos, eos = bpe.token_to_id("<|startoftext|>"), bpe.token_to_id("<|endoftext|>")
    bpe.post_processor = processors.TemplateProcessing(single="<|startoftext|> $A <|endoftext|>",
                                                       special_tokens=[("<|startoftext|>", bos), ("<|endoftext|>", eos)])
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<|startoftext|>",
                                               eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    config = transformers.CLIPConfig(
        text_config=dict(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, max_position_embeddings=77, bos_token_id=bos, eos_token_id=eos,
                         pad_token_id=eos),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                           image_size=32, patch_size=16),
        projection_dim=512,
    )
    torch.manual_seed(0)
    transformers.CLIPModel(config).save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def wav2clip_files(tmp_path_factory):
    pytest.importorskip("wav2clip")
    from wav2clip.model.encoder import MLPLayers, ResNetExtractor

    root = tmp_path_factory.mktemp("wav2clip")
    torch.manual_seed(0)
    encoder = ResNetExtractor(scenario="supervise").encoder
    transform = MLPLayers(units=[512, 512, 512], dropout=0.1)
    state = {f"audio_encoder.{k}": v for k, v in encoder.state_dict().items()}
    state |= {f"audio_transform.{k}": v for k, v in transform.state_dict().items()}
    torch.save(state, root / "Wav2CLIP.pt")
    return root / "Wav2CLIP.pt", save_tiny_clip(root / "clip")


def test_fixed_window_takes_the_first_window_or_tiles() -> None:
    x = np.arange(5, dtype=np.float32)
    assert fixed_window(x, 3).tolist() == [0, 1, 2]
    assert fixed_window(x, 12).tolist() == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1]
    assert fixed_window(np.zeros(0, np.float32), 4).tolist() == [0, 0, 0, 0]


def test_wav2clip_encodes_16k_audio_into_clip_space(wav2clip_files, tmp_path: Path) -> None:
    checkpoint, clip = wav2clip_files
    model = load_model(f"wav2clip:{checkpoint},clip={clip}", _options(batch_size=3))
    assert model.sample_rate == 16_000
    text = model.encode_text(["a dog barking", "rain falling", "a dog barking"])
    assert text.shape == (3, 512) and text.dtype == np.float32
    np.testing.assert_allclose(text[0], text[2], atol=1e-6)

    rng = np.random.default_rng(0)
    paths = []
    for i, (seconds, rate) in enumerate([(1.0, 16_000), (1.0, 44_100), (2.0, 16_000)]):
        paths.append(tmp_path / f"c{i}.wav")
        sf.write(paths[-1], (0.2 * rng.standard_normal(int(seconds * rate))).astype(np.float32), rate, subtype="FLOAT")
    audio = model.encode_audio(paths)
    assert audio.shape == (3, 512)
    # Wav2CLIP standardises the log-spectrogram over its whole input tensor, so each clip runs alone:
    # a clip's vector never depends on the other clips of its batch
    alone = [model.encode_audio([p])[0] for p in paths]
    np.testing.assert_allclose(np.stack(alone), audio, atol=1e-5)
    from reasonaudio.retrieval.adapters.audio import load_mono

    with torch.no_grad():
        direct = model.audio(torch.from_numpy(load_mono(paths[1], 16_000))[None]).numpy()[0]
        batched = model.audio(torch.from_numpy(np.stack([load_mono(p, 16_000) for p in paths[:2]]))).numpy()
    np.testing.assert_allclose(audio[1], direct, atol=1e-5)
    assert not np.allclose(batched[1], direct, atol=1e-3)  # what batching would have done


def test_wav2clip_refusals(wav2clip_files, tmp_path: Path) -> None:
    checkpoint, clip = wav2clip_files
    with pytest.raises(UserError, match="no such Wav2CLIP checkpoint file"):
        load_model(f"wav2clip:{tmp_path / 'missing.pt'},clip={clip}")
    # without clip=, the pinned Hub CLIP is resolved: from an empty cache, offline, that is one line naming it
    with pytest.raises(UserError, match=r"openai/clip-vit-base-patch32@3d74acf9\w+: not in the Hugging Face cache .*"
                                        r"reasonaudio models --download"):
        load_model(f"wav2clip:{checkpoint}", _options())
    torch.save({"something.else": torch.zeros(1)}, tmp_path / "other.pt")
    with pytest.raises(UserError, match="not a Wav2CLIP checkpoint"):
        load_model(f"wav2clip:{tmp_path / 'other.pt'},clip={clip}")


def test_msclap_and_laion_clap_refuse_clearly(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such Microsoft CLAP checkpoint file"):
        load_model(f"msclap:{tmp_path / 'CLAP_weights_2023.pth'}")
    with pytest.raises(UserError, match="no such LAION CLAP checkpoint file"):
        load_model(f"laion-clap:{tmp_path / '630k-audioset-best.pt'}")
    (tmp_path / "w.pt").write_bytes(b"")
    with pytest.raises(UserError, match="fusion must be 0 or 1"):
        load_model(f"laion-clap:{tmp_path / 'w.pt'},fusion=yes")
    try:
        import msclap  # noqa: F401
    except ImportError:
        with pytest.raises(UserError, match="needs the Python package 'msclap'.*pins transformers<5 and numpy<2"):
            load_model(f"msclap:{tmp_path / 'w.pt'}")
    try:
        import laion_clap  # noqa: F401
    except ImportError:
        with pytest.raises(UserError, match="needs the Python package 'laion_clap'.*pins numpy<2"):
            load_model(f"laion-clap:{tmp_path / 'w.pt'}")



def test_msclap_on_its_own_model_class(tmp_path: Path, monkeypatch) -> None:
    """msclap's CLAP (its HTSAT audio encoder, random weights) with a tiny GPT-2 text model, saved in the
    released checkpoint's layout ({"model": state_dict}) and loaded through `msclap:` — runs where msclap
    is importable (e.g. `pip install --no-deps msclap torchlibrosa`; its pins keep it out of CI)."""
    pytest.importorskip("torchlibrosa", reason="msclap's audio front end needs torchlibrosa")
    wrapper_module = pytest.importorskip(
        "msclap.CLAPWrapper", reason="msclap pins transformers<5 and numpy<2, so it is not installed next to this project")
    transformers = pytest.importorskip("transformers")
    from msclap.models.clap import CLAP
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    text_dir = tmp_path / "tiny-gpt2"  # msclap picks its GPT-2 tokenisation by "gpt" in the model's name
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(["a dog barking then rain falling"] * 10, trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>", bos_token="<|endoftext|>")
    tok.save_pretrained(text_dir)
    # width 768 is what msclap 2023's projection expects (transformer_embed_dim); one layer keeps it small
    transformers.GPT2Model(transformers.GPT2Config(vocab_size=len(tok) + 1, n_embd=768, n_layer=1, n_head=2,
                                                   n_positions=128)).save_pretrained(text_dir)
    read = wrapper_module.CLAPWrapper.read_config_as_args

    def local_text_model(self, config, args=None, is_config_str=False):
        namespace = read(self, config, args, is_config_str)
        namespace.text_model = str(text_dir)  # instead of the Hub's "gpt2"
        return namespace

    monkeypatch.setattr(wrapper_module.CLAPWrapper, "read_config_as_args", local_text_model)
    a = read(None, (Path(wrapper_module.__file__).parent / "configs" / "config_2023.yml").read_text(), is_config_str=True)
    torch.manual_seed(0)
    clap = CLAP(audioenc_name=a.audioenc_name, sample_rate=a.sampling_rate, window_size=a.window_size,
                hop_size=a.hop_size, mel_bins=a.mel_bins, fmin=a.fmin, fmax=a.fmax, classes_num=a.num_classes,
                out_emb=a.out_emb, text_model=str(text_dir), transformer_embed_dim=a.transformer_embed_dim, d_proj=a.d_proj)
    torch.save({"model": clap.state_dict()}, tmp_path / "CLAP_weights_2023.pth")
    del clap

    model = load_model(f"msclap:{tmp_path / 'CLAP_weights_2023.pth'}", _options(batch_size=2))
    assert (model.sample_rate, model.max_seconds) == (44_100, 7.0)
    assert model.text_inputs(["a dog"])["input_ids"].shape == (1, 77)
    text = model.encode_text(["a dog barking", "rain falling", "a dog barking"])
    assert text.shape == (3, 1024)
    np.testing.assert_allclose(text[0], text[2], atol=1e-5)
    rng = np.random.default_rng(0)
    sf.write(tmp_path / "long.wav", (0.1 * rng.standard_normal(16_000 * 9)).astype(np.float32), 16_000)
    sf.write(tmp_path / "short.wav", (0.1 * rng.standard_normal(16_000 * 2)).astype(np.float32), 16_000)
    audio = model.encode_audio([tmp_path / "long.wav", tmp_path / "short.wav", tmp_path / "long.wav"])
    assert audio.shape == (3, 1024)
    # the 9 s clip gives its first 7 s every time (msclap itself would crop at random), batching changes nothing
    np.testing.assert_allclose(audio[0], audio[2], atol=1e-5)
    np.testing.assert_allclose(model.encode_audio([tmp_path / "short.wav"])[0], audio[1], atol=1e-5)
