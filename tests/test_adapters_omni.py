"""The Qwen2.5-Omni thinker embedders (lco-omni, e5-omni, omniembed) on a tiny random thinker.

The checkpoint (`omni_tiny`) has the real architecture and processor with random weights, so the vectors
mean nothing; what is checked is each family's path: its prompt text, last-token pooling on left-padded
batches, unit-norm vectors, batching that does not change a vector, audio resampled to 16 kHz and cut to
the 30 s window, OmniEmbed's LoRA adapter merged onto a local base, and one-line refusals.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("torchvision", reason="the Qwen2.5-Omni processor's video part needs torchvision")

from reasonaudio.io.benchmark import load_benchmark  # noqa: E402
from reasonaudio.errors import UserError  # noqa: E402
from reasonaudio.evaluation.run import evaluate  # noqa: E402
from reasonaudio.retrieval import ModelOptions, load_model  # noqa: E402
from reasonaudio.retrieval.adapters.omni import RECIPES, last_token_pool  # noqa: E402

FAMILIES = ("lco-omni", "e5-omni", "omniembed")


@pytest.fixture(scope="module")
def tiny(omni_tiny, tmp_path_factory) -> Path:
    return omni_tiny.save_tiny_qwen_omni_thinker(tmp_path_factory.mktemp("omni") / "thinker")


def _options(batch_size: int = 4) -> ModelOptions:
    return ModelOptions(batch_size=batch_size, device="cpu", progress=False)


def _noise(path: Path, seconds: float, rate: int, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    sf.write(path, (0.2 * rng.standard_normal(int(seconds * rate))).astype(np.float32), rate, subtype="FLOAT")
    return path


def test_each_family_writes_its_own_prompt(tiny: Path) -> None:
    rendered = {name: load_model(f"{name}:{tiny}", _options()) for name in FAMILIES}
    lco, e5, omniembed = (rendered[n] for n in FAMILIES)
    q = {n: m.render(m.query_contents(["a dog barks"]))[0] for n, m in rendered.items()}
    d = {n: m.render(m.audio_contents(1))[0] for n, m in rendered.items()}
    # LCO: the item, then the one-word summary instruction, then the assistant header (pooled position)
    assert "a dog barks\nSummarize the above text in one word:<|im_end|>" in q["lco-omni"]
    assert q["lco-omni"].endswith("<|im_start|>assistant\n")
    assert "<|AUDIO|><|audio_eos|>\nSummarize the above audio in one word:<|im_end|>" in d["lco-omni"]
    # e5-omni: "Query: " prefix, generation prompt, then <|endoftext|>; documents carry no text at all
    assert "<|im_start|>user\nQuery: a dog barks<|im_end|>" in q["e5-omni"]
    assert q["e5-omni"].endswith("<|im_start|>assistant\n<|endoftext|>")
    assert "<|im_start|>user\n<|audio_bos|><|AUDIO|><|audio_eos|><|im_end|>" in d["e5-omni"]
    # OmniEmbed: the same texts but no assistant header before <|endoftext|>
    assert q["omniembed"].endswith("Query: a dog barks<|im_end|>\n<|endoftext|>")
    assert "assistant" not in d["omniembed"].split("<|im_start|>user")[1]
    assert lco.recipe is RECIPES["lco-omni"] and e5.recipe.suffix == omniembed.recipe.suffix == "<|endoftext|>"


@pytest.mark.parametrize("family", FAMILIES)
def test_vectors_are_unit_last_token_states_independent_of_batching(family: str, tiny: Path, tmp_path: Path) -> None:
    model = load_model(f"{family}:{tiny}", _options(batch_size=3))
    texts = ["a dog barking", "rain falling while thunder rumbles", "a dog barking", "a bell"]
    text = model.encode_text(texts)
    assert text.shape == (4, 32) and text.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(text, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(text[0], text[2], atol=1e-6)
    assert not np.allclose(text[0], text[1], atol=1e-3)
    # the batch of 3 left-pads the short texts; alone, nothing is padded: the same vector
    np.testing.assert_allclose(model.encode_text(texts[3:4])[0], text[3], atol=1e-5)

    paths = [_noise(tmp_path / f"c{i}.wav", s, 16_000, seed=i) for i, s in enumerate([1.0, 2.5, 0.6])]
    audio = model.encode_audio(paths)
    assert audio.shape == (3, 32)
    np.testing.assert_allclose(np.linalg.norm(audio, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(model.encode_audio(paths[2:3])[0], audio[2], atol=1e-5)

    # the pooled vector is the last hidden layer's last real position, normalised (the cards' recipe)
    inputs = model.audio_inputs(paths)
    with torch.no_grad():
        hidden = model.model(**inputs, output_hidden_states=True, return_dict=True).hidden_states[-1]
    expected = torch.nn.functional.normalize(hidden[:, -1].float(), dim=-1).numpy()
    np.testing.assert_allclose(audio, expected, atol=1e-5)


def test_last_token_pool_reads_each_rows_last_real_position() -> None:
    hidden = torch.arange(2 * 4 * 1, dtype=torch.float32).reshape(2, 4, 1)
    left = torch.tensor([[0, 1, 1, 1], [1, 1, 1, 1]])
    right = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1]])
    assert last_token_pool(hidden, left)[:, 0].tolist() == [3.0, 7.0]
    assert last_token_pool(hidden, right)[:, 0].tolist() == [1.0, 7.0]


def test_audio_is_resampled_to_16k_and_cut_to_the_window(tiny: Path, tmp_path: Path) -> None:
    model = load_model(f"lco-omni:{tiny}", _options())
    assert model.sample_rate == 16_000 and model.max_seconds == 30.0
    paths = [_noise(tmp_path / "a.wav", 1.0, 24_000), _noise(tmp_path / "b.wav", 2.0, 44_100, seed=1)]
    frames = model.audio_inputs(paths)["feature_attention_mask"].sum(-1).tolist()
    assert frames == [100, 200]  # Whisper features: 100 frames per second of 16 kHz audio

    head = 0.2 * np.random.default_rng(3).standard_normal(30 * 16_000).astype(np.float32)
    sf.write(tmp_path / "30s.wav", head, 16_000, subtype="FLOAT")
    sf.write(tmp_path / "33s.wav", np.concatenate([head, np.full(3 * 16_000, 0.5, np.float32)]), 16_000, subtype="FLOAT")
    a, b = model.encode_audio([tmp_path / "30s.wav", tmp_path / "33s.wav"])
    np.testing.assert_allclose(a, b, atol=1e-5)


def test_an_omni_embedder_runs_through_evaluate(evalfixture, tiny: Path, tmp_path: Path) -> None:
    bench = load_benchmark(evalfixture.write_fixture(tmp_path / "bench", with_beir=False))
    model = load_model(f"e5-omni:{tiny}", _options(batch_size=3))
    first = evaluate(bench, model, n_boot=0, progress=False)
    assert first.per_query.height == len(evalfixture.QUERIES)
    again = evaluate(bench, model, n_boot=0, progress=False)
    assert again.rankings.equals(first.rankings)


def test_omniembed_merges_its_lora_adapter_onto_a_local_base(tiny: Path, tmp_path: Path) -> None:
    peft = pytest.importorskip("peft")
    base = transformers.Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(tiny)
    config = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    torch.manual_seed(1)
    lora = peft.get_peft_model(base, config)
    adapter = tmp_path / "adapter"
    lora.save_pretrained(adapter)
    # a LoRA directory has no processor of its own: it comes from the base directory
    spec = f"omniembed:{adapter},base={tiny},processor={tiny}"
    tuned = load_model(spec, _options()).encode_text(["a dog barking"])
    plain = load_model(f"omniembed:{tiny}", _options()).encode_text(["a dog barking"])
    assert tuned.shape == plain.shape and not np.allclose(tuned, plain, atol=1e-4)

    # an adapter saved by transformers 4 (the published OmniEmbed-v0.1) names the text model one level up;
    # its weights are mapped onto this version's modules, not silently dropped
    from safetensors.torch import load_file, save_file

    v4 = tmp_path / "adapter-v4"
    v4.mkdir()
    (v4 / "adapter_config.json").write_text((adapter / "adapter_config.json").read_text())
    weights = load_file(str(adapter / "adapter_model.safetensors"))
    renamed = {k.replace("base_model.model.model.language_model.", "base_model.model.model.")
                .replace("base_model.model.model.audio_tower.", "base_model.model.audio_tower."): v for k, v in weights.items()}
    assert renamed != weights
    save_file(renamed, str(v4 / "adapter_model.safetensors"))
    from_v4 = load_model(f"omniembed:{v4},base={tiny},processor={tiny}", _options()).encode_text(["a dog barking"])
    np.testing.assert_allclose(from_v4, tuned, atol=1e-6)
    save_file({"base_model.model.nowhere.q_proj.lora_A.weight": next(iter(weights.values()))}, str(v4 / "adapter_model.safetensors"))
    with pytest.raises(UserError, match="LoRA weight\\(s\\) match no module of this thinker"):
        load_model(f"omniembed:{v4},base={tiny},processor={tiny}", _options())

    # without base=, the base path the adapter records is used when it is a local directory (its
    # processor too) ...
    recorded = load_model(f"omniembed:{adapter}", _options()).encode_text(["a dog barking"])
    np.testing.assert_allclose(recorded, tuned, atol=1e-6)
    # ... and a Hub id there (as in the published adapter) is resolved through the HF cache: offline and
    # not cached, that is one line naming the repository and the command that fetches it
    import json

    config_path = adapter / "adapter_config.json"
    config_path.write_text(json.dumps({**json.loads(config_path.read_text()),
                                       "base_model_name_or_path": "Tevatron/Qwen2.5-Omni-7B-Thinker"}))
    with pytest.raises(UserError, match=r"Tevatron/Qwen2.5-Omni-7B-Thinker@main: not in the Hugging Face cache .*"
                                        r"reasonaudio models --download Tevatron/Qwen2.5-Omni-7B-Thinker@main"):
        load_model(f"omniembed:{adapter},processor={tiny}", _options())
    config_path.write_text(json.dumps({**json.loads(config_path.read_text()), "base_model_name_or_path": "nowhere"}))
    with pytest.raises(UserError, match=r"is a LoRA adapter for 'nowhere', which is neither a local directory nor a Hub "
                                        r"id; pass the base thinker with ,base=DIR"):
        load_model(f"omniembed:{adapter},processor={tiny}", _options())


def test_refusals_are_one_clear_line(tiny: Path, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such LCO-Embedding-Omni model directory"):
        load_model(f"lco-omni:{tmp_path / 'missing'}")
    bare = tmp_path / "weights-only"
    bare.mkdir()
    (bare / "config.json").write_text((tiny / "config.json").read_text())
    with pytest.raises(UserError, match=r"no processor files .* pass the base Qwen2.5-Omni directory with ,processor=DIR"):
        load_model(f"e5-omni:{bare}")
    with pytest.raises(UserError, match="option 'pool=mean' not understood"):
        load_model(f"e5-omni:{tiny},pool=mean")
    with pytest.raises(UserError, match="needs the local path of the model's weights"):
        load_model("omniembed")


def test_a_full_qwen_omni_checkpoint_gives_its_thinker_and_processor(tiny: Path, tmp_path: Path) -> None:
    # the full model (thinker + talker config, as Qwen/Qwen2.5-Omni-7B ships) as a base: the thinker is
    # taken from it without building the talker, and its processor serves a LoRA directory that has none
    thinker = transformers.Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(tiny)
    config = transformers.Qwen2_5OmniConfig(thinker_config=thinker.config.to_dict(), enable_audio_output=False)
    full = transformers.Qwen2_5OmniForConditionalGeneration(config)
    full.thinker.load_state_dict(thinker.state_dict())
    full_dir = tmp_path / "full"
    full.save_pretrained(full_dir)
    transformers.Qwen2_5OmniProcessor.from_pretrained(tiny).save_pretrained(full_dir)
    torch.save({}, full_dir / "spk_dict.pt")  # the talker's speaker table, read on load even when unused
    expected = load_model(f"e5-omni:{tiny}", _options()).encode_text(["a dog barking"])
    np.testing.assert_allclose(load_model(f"e5-omni:{full_dir}", _options()).encode_text(["a dog barking"]), expected, atol=1e-6)

    peft = pytest.importorskip("peft")
    lora = peft.get_peft_model(thinker, peft.LoraConfig(r=2, target_modules=["q_proj"]))  # B = 0: the identity
    lora.save_pretrained(tmp_path / "lora")
    via_base = load_model(f"omniembed:{tmp_path / 'lora'},base={full_dir}", _options()).encode_text(["a dog barking"])
    plain = load_model(f"omniembed:{tiny}", _options()).encode_text(["a dog barking"])
    np.testing.assert_allclose(via_base, plain, atol=1e-6)
