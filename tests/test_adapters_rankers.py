"""The named two-stage rankers bge-m3 and qwen3-emb on tiny random models of the same architectures.

BGE-M3 is an XLM-RoBERTa encoder (dense vector = [CLS] state), Qwen3-Embedding a Qwen3 decoder (last
token, left padding, instruction on queries only); both are built here with seeded weights and a
byte-level BPE tokenizer, saved with save_pretrained and loaded back through the rankers' own code.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from reasonaudio.io.benchmark import load_benchmark  # noqa: E402
from reasonaudio.errors import UserError  # noqa: E402
from reasonaudio.evaluation.run import evaluate  # noqa: E402
from reasonaudio.retrieval import ModelOptions, load_model  # noqa: E402
from reasonaudio.retrieval.adapters.rankers import QWEN3_TASK  # noqa: E402

WORDS = ["a dog barking then a rising siren while rain falling", "Instruct: Given a description of sounds",
         "Query: retrieve the audio caption that matches it", "thunder rumbling bell whistle silence"]


def _bpe(specials: list[str], post: tuple[str, str] | None):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(WORDS * 10, trainers.BpeTrainer(vocab_size=350, special_tokens=specials,
                                                           initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    if post:
        first, last = post
        ids = {t: bpe.token_to_id(t) for t in (first, last) if t}
        single = " ".join(x for x in (first, "$A", last) if x)
        bpe.post_processor = processors.TemplateProcessing(single=single, special_tokens=list(ids.items()))
    return bpe


def save_tiny_bge_m3(path: Path) -> Path:
    bpe = _bpe(["<s>", "<pad>", "</s>", "<unk>"], ("<s>", "</s>"))
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<s>", eos_token="</s>", cls_token="<s>",
                                               sep_token="</s>", pad_token="<pad>", unk_token="<unk>")
    config = transformers.XLMRobertaConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                           intermediate_size=64, max_position_embeddings=128, pad_token_id=1)
    torch.manual_seed(0)
    transformers.XLMRobertaModel(config, add_pooling_layer=False).save_pretrained(path)
    tok.save_pretrained(path)
    return path


def save_tiny_qwen3_embedding(path: Path) -> Path:
    # like the published tokenizer, every input ends with <|endoftext|>, the token whose state is pooled
    bpe = _bpe(["<|endoftext|>", "<|im_start|>", "<|im_end|>"], ("", "<|endoftext|>"))
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    config = transformers.Qwen3Config(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                                      max_position_embeddings=512)
    torch.manual_seed(0)
    transformers.Qwen3Model(config).save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("rankers")
    return {"bge-m3": save_tiny_bge_m3(root / "bge"), "qwen3-emb": save_tiny_qwen3_embedding(root / "qwen3")}


def _ranker(name: str, path: Path, **extra):
    options = ModelOptions(batch_size=3, device="cpu", progress=False, extra=extra)
    return load_model(f"two-stage:oracle+{name}={path}", options).encoder


def _states(ranker, texts: list[str]):
    batch = ranker.tokenizer(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        return ranker.model(**batch).last_hidden_state, batch["attention_mask"]


def test_bge_m3_dense_vector_is_the_normalised_cls_state_without_instruction(dirs) -> None:
    ranker = _ranker("bge-m3", dirs["bge-m3"])
    texts = ["a dog barking", "rain falling then thunder rumbling", "a bell"]
    vectors = ranker.encode_queries(texts)
    assert vectors.shape == (3, 32) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert ranker.query_text("a dog barking") == "a dog barking"  # no instruction on either side
    np.testing.assert_allclose(ranker.encode_documents(texts), vectors, atol=1e-6)
    hidden, _ = _states(ranker, texts)
    assert ranker.tokenizer.padding_side == "right"
    np.testing.assert_allclose(vectors, torch.nn.functional.normalize(hidden[:, 0], dim=-1).numpy(), atol=1e-5)
    np.testing.assert_allclose(ranker.encode_queries(texts[2:])[0], vectors[2], atol=1e-5)  # padding changes nothing


def test_qwen3_embedding_instructs_queries_and_pools_the_last_token(dirs) -> None:
    ranker = _ranker("qwen3-emb", dirs["qwen3-emb"])
    assert ranker.tokenizer.padding_side == "left"
    assert ranker.query_text("a dog barking") == f"Instruct: {QWEN3_TASK}\nQuery:a dog barking"
    texts = ["a dog barking", "rain falling then thunder rumbling", "a bell"]
    queries, documents = ranker.encode_queries(texts), ranker.encode_documents(texts)
    np.testing.assert_allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(queries, documents, atol=1e-3)  # documents carry no instruction
    hidden, mask = _states(ranker, texts)
    assert bool(mask[:, -1].all())  # left padding: every row's last column is its last real token
    np.testing.assert_allclose(documents, torch.nn.functional.normalize(hidden[:, -1], dim=-1).numpy(), atol=1e-5)
    np.testing.assert_allclose(ranker.encode_documents(texts[2:])[0], documents[2], atol=1e-5)

    custom = _ranker("qwen3-emb", dirs["qwen3-emb"], instruction="Find the matching sound")
    assert custom.query_text("x") == "Instruct: Find the matching sound\nQuery:x"


@pytest.mark.parametrize("name", ["bge-m3", "qwen3-emb"])
def test_named_ranker_runs_a_two_stage_evaluation(evalfixture, name: str, dirs, tmp_path: Path) -> None:
    bench = load_benchmark(evalfixture.write_fixture(tmp_path / "bench", with_beir=False))
    model = load_model(f"two-stage:oracle+{name}={dirs[name]}", ModelOptions(batch_size=4, device="cpu", progress=False))
    result = evaluate(bench, model, n_boot=0, progress=False)
    assert result.per_query.height == len(evalfixture.QUERIES)
    assert result.captions["caption"].to_list()[0] == "a dog barking, then a rising siren"


def test_ranker_refusals(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such Qwen3-Embedding model directory"):
        load_model(f"two-stage:oracle+qwen3-emb={tmp_path / 'missing'}")
    with pytest.raises(UserError, match="expected minilm, st=DIR, bge-m3=DIR_OR_HUB_ID, qwen3-emb=DIR_OR_HUB_ID or bm25"):
        load_model("two-stage:oracle+bge-m3")
