"""A tiny, randomly initialised Qwen2-Audio checkpoint built offline, for tests (no download).

The processor is real: a Whisper feature extractor and a byte-level BPE tokenizer trained here on a
few sentences, with Qwen2-Audio's special tokens and the processor's default chat template; the model
is a 2-layer audio / 2-layer text config with seeded weights, so its (meaningless) greedy output is
fixed for a given machine. Saving takes well under a second.
"""

from __future__ import annotations

from pathlib import Path

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|audio_bos|>", "<|AUDIO|>", "<|audio_eos|>"]

TRAINING_TEXT = [
    "The audio contains two speech segments.",
    "Answer with <ans>19</ans> please.",
    "system user assistant You are a helpful assistant.",
    "A dog barks, then a siren rises while rain falls.",
]


def save_tiny_qwen2_audio(path: Path, *, seed: int = 0) -> Path:
    """Write processor + model files into `path` (created) and return it."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        PreTrainedTokenizerFast,
        Qwen2AudioConfig,
        Qwen2AudioForConditionalGeneration,
        Qwen2AudioProcessor,
        WhisperFeatureExtractor,
    )

    path = Path(path)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(TRAINING_TEXT * 10, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>", additional_special_tokens=SPECIALS[1:]
    )
    processor = Qwen2AudioProcessor(feature_extractor=WhisperFeatureExtractor(feature_size=128), tokenizer=tokenizer)
    config = Qwen2AudioConfig(
        audio_config={"d_model": 32, "encoder_layers": 2, "encoder_attention_heads": 2, "encoder_ffn_dim": 64,
                      "num_mel_bins": 128, "max_source_positions": 1500},
        text_config={"model_type": "qwen2", "vocab_size": len(tokenizer), "hidden_size": 32,
                     "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                     "num_key_value_heads": 1, "max_position_embeddings": 2048},
        audio_token_index=tokenizer.convert_tokens_to_ids("<|AUDIO|>"),
    )
    torch.manual_seed(seed)
    model = Qwen2AudioForConditionalGeneration(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path
