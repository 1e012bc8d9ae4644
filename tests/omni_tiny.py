"""A tiny, randomly initialised Qwen2.5-Omni *thinker* checkpoint built offline, for tests (no download).

Same architecture as LCO-Embedding-Omni, e5-omni and OmniEmbed (Qwen2_5OmniThinkerForConditionalGeneration):
a 2-layer audio encoder, 1-layer vision encoder and 2-layer text decoder with seeded weights, a real
Qwen2_5OmniProcessor (Whisper features at 16 kHz, Qwen2-VL image/video processors) and a byte-level BPE
tokenizer trained here with the Omni special tokens. The chat template is a minimal Qwen-style one (system
turn, user turn with the audio placeholder, optional assistant header): the adapters use whatever
template the checkpoint ships, so only its shape matters here.
"""

from __future__ import annotations

from pathlib import Path

SPECIALS = {
    "eos": "<|endoftext|>",
    "im_start": "<|im_start|>",
    "im_end": "<|im_end|>",
    "audio_bos_token": "<|audio_bos|>",
    "audio_token": "<|AUDIO|>",
    "audio_eos_token": "<|audio_eos|>",
    "image_token": "<|IMAGE|>",
    "video_token": "<|VIDEO|>",
    "vision_bos_token": "<|vision_bos|>",
    "vision_eos_token": "<|vision_eos|>",
}

TRAINING_TEXT = [
    "Summarize the above audio in one word:",
    "Summarize the above text in one word:",
    "Query: a dog barks, then a siren rises while rain falls.",
    "system user assistant You are a helpful assistant.",
]

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for item in message['content'] %}"
    "{% if item['type'] == 'audio' %}<|audio_bos|><|AUDIO|><|audio_eos|>"
    "{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def save_tiny_qwen_omni_thinker(path: Path, *, seed: int = 0) -> Path:
    """Write processor + thinker files into `path` (created) and return it."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        PreTrainedTokenizerFast,
        Qwen2_5OmniProcessor,
        Qwen2_5OmniThinkerConfig,
        Qwen2_5OmniThinkerForConditionalGeneration,
        Qwen2VLImageProcessor,
        WhisperFeatureExtractor,
    )

    path = Path(path)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=list(SPECIALS.values()), initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(TRAINING_TEXT * 10, trainer)
    named = {k: v for k, v in SPECIALS.items() if k.endswith("_token")}
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>",
        additional_special_tokens=list(SPECIALS.values())[1:], extra_special_tokens=named,
    )
    ids = {k: tokenizer.convert_tokens_to_ids(v) for k, v in SPECIALS.items()}
    try:
        from transformers import Qwen2VLVideoProcessor

        video_processor = Qwen2VLVideoProcessor()
    except ImportError:  # the video processor needs torchvision
        video_processor = None
    processor = Qwen2_5OmniProcessor(
        image_processor=Qwen2VLImageProcessor(), video_processor=video_processor,
        feature_extractor=WhisperFeatureExtractor(feature_size=128), tokenizer=tokenizer, chat_template=CHAT_TEMPLATE,
    )
    config = Qwen2_5OmniThinkerConfig(
        audio_config={"d_model": 32, "encoder_layers": 2, "encoder_attention_heads": 2, "encoder_ffn_dim": 64,
                      "num_mel_bins": 128, "max_source_positions": 1500, "n_window": 100, "output_dim": 32},
        vision_config={"depth": 1, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 32,
                       "fullatt_block_indexes": [0]},
        text_config={"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 4096,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]},
                     "pad_token_id": ids["eos"], "eos_token_id": ids["im_end"]},
        audio_token_index=ids["audio_token"], image_token_index=ids["image_token"], video_token_index=ids["video_token"],
        audio_start_token_id=ids["audio_bos_token"], audio_end_token_id=ids["audio_eos_token"],
        vision_start_token_id=ids["vision_bos_token"], vision_end_token_id=ids["vision_eos_token"],
        user_token_id=tokenizer.convert_tokens_to_ids("user") if "user" in tokenizer.get_vocab() else 0,
    )
    torch.manual_seed(seed)
    model = Qwen2_5OmniThinkerForConditionalGeneration(config).eval()
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path
