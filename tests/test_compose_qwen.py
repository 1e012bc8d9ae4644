"""The transformers adapter on a tiny randomly initialised Qwen2-Audio saved locally (no download).

The processor is real: a Whisper feature extractor and a byte-level BPE tokenizer trained in the test
on a few sentences, with Qwen2-Audio's special tokens; the model is a 2-layer text / 2-layer audio
config. Output text is random-weight noise; the test checks the path runs end to end and decodes.
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from reasonaudio.compose.runner import Qwen2AudioModel, load_model  # noqa: E402

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|audio_bos|>", "<|AUDIO|>", "<|audio_eos|>"]


def _save_tiny_model(path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (PreTrainedTokenizerFast, Qwen2AudioConfig, Qwen2AudioForConditionalGeneration,
                              Qwen2AudioProcessor, WhisperFeatureExtractor)

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(["The audio contains two speech segments.", "Answer with <ans>19</ans> please.",
                             "system user assistant You are a helpful assistant."] * 10, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                        additional_special_tokens=SPECIALS[1:])
    processor = Qwen2AudioProcessor(feature_extractor=WhisperFeatureExtractor(feature_size=128), tokenizer=tokenizer)
    config = Qwen2AudioConfig(
        audio_config={"d_model": 32, "encoder_layers": 2, "encoder_attention_heads": 2, "encoder_ffn_dim": 64,
                      "num_mel_bins": 128, "max_source_positions": 1500},
        text_config={"model_type": "qwen2", "vocab_size": len(tokenizer), "hidden_size": 32,
                     "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                     "num_key_value_heads": 1, "max_position_embeddings": 2048},
        audio_token_index=tokenizer.convert_tokens_to_ids("<|AUDIO|>"),
    )
    torch.manual_seed(0)
    model = Qwen2AudioForConditionalGeneration(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(path)
    processor.save_pretrained(path)


def test_tiny_qwen2_audio_generates(tmp_path):
    _save_tiny_model(tmp_path / "tiny")
    wav = tmp_path / "a.wav"
    sf.write(wav, (0.1 * np.sin(np.arange(24000) / 10)).astype(np.float32), 24000)  # resampled to 16 kHz
    model = load_model(f"qwen2-audio:{tmp_path / 'tiny'}", max_new_tokens=5, device="cpu")
    assert isinstance(model, Qwen2AudioModel)
    out1 = model.generate(str(wav), "Which segment has rain? Reply with <segment>1</segment>.")
    out2 = model.generate(str(wav), "Which segment has rain? Reply with <segment>1</segment>.")
    assert isinstance(out1, str) and out1 and out1 == out2  # seeded weights, greedy: fixed non-empty text


def test_missing_model_dir_is_a_user_error(tmp_path):
    from reasonaudio.errors import UserError
    with pytest.raises(UserError, match="does not exist"):
        load_model(f"qwen2-audio:{tmp_path / 'nope'}")
