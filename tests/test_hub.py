"""Hub dataset folders as `huggingface-cli download --repo-type dataset` leaves them (reasonaudio.io.hub).

Every fixture is written here with pyarrow / polars / soundfile exactly in the Hub's layouts:
sharded parquet per config (`corpus/test-00000-of-00002.parquet`), mteb's variants (a `query`
config, qrels in `default`, a corpus split named `corpus`, `<subset>-corpus|queries|qrels`),
README `configs:` YAML, CSV tables, and audio as `{bytes, path}` structs in FLAC, WAV, OGG and MP3.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import soundfile as sf

from reasonaudio.errors import UserError
from reasonaudio.io.hub import EmbeddedAudio, load_hub
from reasonaudio.retrieval import load_any_benchmark
from reasonaudio.retrieval.adapters.audio import load_mono

SR = 16_000
FORMATS = [("WAV", "PCM_16", ".wav"), ("FLAC", "PCM_16", ".flac"), ("OGG", "VORBIS", ".ogg"), ("MP3", "MPEG_LAYER_III", ".mp3")]
AUDIO_TYPE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def tone(i: int, seconds: float = 1.0) -> np.ndarray:
    t = np.arange(int(seconds * SR)) / SR
    return (0.3 * np.sin(2 * np.pi * (200 + 150 * i) * t)).astype(np.float32)


def encode(x: np.ndarray, fmt: str, subtype: str) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, x, SR, format=fmt, subtype=subtype)
    return buf.getvalue()


def write_parquet(path: Path, columns: dict, schema: pa.Schema | None = None, row_group: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns, schema=schema), path, row_group_size=row_group)


def corpus_rows(n: int, id_key: str = "_id"):
    rows = []
    for i in range(n):
        fmt, subtype, ext = FORMATS[i % len(FORMATS)]
        rows.append({id_key: f"c{i:03d}", "audio": {"bytes": encode(tone(i), fmt, subtype), "path": f"c{i:03d}{ext}"}})
    return rows


def write_corpus(root: Path, config: str, rows, shards: int, split: str = "test", row_group: int | None = None) -> None:
    id_key = next(k for k in rows[0] if k != "audio")
    schema = pa.schema([(id_key, pa.string()), ("audio", AUDIO_TYPE)])
    per = -(-len(rows) // shards)
    for s in range(shards):
        part = rows[s * per : (s + 1) * per]
        write_parquet(
            root / config / f"{split}-{s:05d}-of-{shards:05d}.parquet",
            {id_key: [r[id_key] for r in part], "audio": [r["audio"] for r in part]},
            schema,
            row_group,
        )


QUERIES = {"q0": "a low tone", "q1": "a high tone", "q2": "a middle tone"}
QRELS = [("q0", "c000", 1), ("q0", "c001", 1), ("q1", "c007", 1), ("q2", "c004", 1), ("q2", "c005", 0)]


def write_queries(root: Path, config: str, queries=QUERIES, id_key: str = "_id", split: str = "test", task=None) -> None:
    cols = {id_key: list(queries), "text": list(queries.values())}
    if task:
        cols["task"] = [task] * len(queries)
    write_parquet(root / config / f"{split}-00000-of-00001.parquet", cols)


def write_qrels(root: Path, config: str, qrels=QRELS, split: str = "test") -> None:
    write_parquet(
        root / config / f"{split}-00000-of-00001.parquet",
        {"query-id": [q for q, _, _ in qrels], "corpus-id": [c for _, c, _ in qrels], "score": [s for *_, s in qrels]},
    )


@pytest.fixture
def hub(tmp_path: Path) -> Path:
    """The plain layout: corpus (two shards, four audio formats), queries, qrels; no README."""
    root = tmp_path / "hub"
    write_corpus(root, "corpus", corpus_rows(8), shards=2)
    write_queries(root, "queries")
    write_qrels(root, "qrels")
    return root


def test_sharded_parquet_with_embedded_audio_in_four_formats(hub: Path):
    bench = load_any_benchmark(hub)
    assert bench.clips["clip_id"].to_list() == [f"c{i:03d}" for i in range(8)]
    assert bench.queries["query_id"].to_list() == ["q0", "q1", "q2"]
    assert set(bench.queries["task"].to_list()) == {"all"}
    # score-0 rows are not relevance
    assert sorted(bench.qrels.select("query_id", "clip_id").rows()) == [("q0", "c000"), ("q0", "c001"), ("q1", "c007"), ("q2", "c004")]
    refs = bench.audio_paths()
    assert all(isinstance(r, EmbeddedAudio) for r in refs)
    assert [r.name for r in refs[:4]] == ["c000.wav", "c001.flac", "c002.ogg", "c003.mp3"]
    for i, ref in enumerate(refs):
        got = load_mono(ref, SR)
        want = tone(i)
        if i % 4 < 2:  # lossless: equal up to 16-bit quantisation
            assert got.shape == want.shape
            assert np.max(np.abs(got - want)) < 1e-4
        else:  # lossy codecs: same tone (decoder delay/padding changes the length a little)
            n = min(len(got), len(want))
            spectrum = np.abs(np.fft.rfft(got[:n]))
            peak_hz = np.argmax(spectrum) * SR / n
            assert abs(peak_hz - (200 + 150 * i)) < 5


def test_eval_cli_runs_on_a_hub_folder(hub: Path, tmp_path: Path):
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "reasonaudio", "eval", str(hub), "--model", "oracle", "--out", str(out), "--quiet", "--no-figures", "--bootstrap", "0"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text())
    assert json.dumps(results).count('"acc@1"') >= 1
    per_query = pl.read_parquet(next(out.glob("per_query*.parquet")))
    assert per_query.height == 3 and per_query["acc@1"].to_list() == [1.0, 1.0, 1.0]


def test_embedded_audio_is_read_one_row_group_at_a_time(tmp_path: Path):
    root = tmp_path / "hub"
    rows = [{"_id": f"c{i:03d}", "audio": {"bytes": encode(tone(i % 7, 0.2), "WAV", "PCM_16"), "path": f"c{i:03d}.wav"}} for i in range(120)]
    write_corpus(root, "corpus", rows, shards=2, row_group=20)  # 2 shards x 3 row groups
    write_queries(root, "queries", {"q0": "x"})
    write_qrels(root, "qrels", [("q0", "c000", 1)])
    bench = load_hub(root)
    store = bench.audio_paths()[0].store
    assert store.row_groups_read == 0  # loading read ids only, no audio
    for start in range(0, 120, 16):  # how the adapters walk the corpus: batch after batch
        for ref in bench.audio_paths()[start : start + 16]:
            load_mono(ref, SR)
        assert len(store._cache) <= store.cache_groups
    assert store.row_groups_read == 6  # every row group read exactly once


def test_mteb_variants_query_config_default_qrels_corpus_split(tmp_path: Path):
    root = tmp_path / "hub"
    write_corpus(root, "corpus", corpus_rows(8, id_key="id"), shards=1, split="corpus")
    write_queries(root, "query", id_key="id", split="queries")
    write_qrels(root, "default")
    bench = load_any_benchmark(root)
    assert bench.clips.height == 8 and bench.queries.height == 3 and bench.qrels.height == 4


def test_subsets_from_readme_configs_become_tasks(tmp_path: Path):
    root = tmp_path / "hub"
    # the corpus lives in one folder; both subsets' corpus configs point at it (as an export does)
    write_corpus(root, "shared", corpus_rows(8), shards=2)
    write_queries(root, "neg-queries", {"q0": "a low tone", "q1": "a high tone"})
    write_qrels(root, "neg-qrels", [("q0", "c000", 1), ("q1", "c007", 1)])
    write_queries(root, "ord-queries", {"q2": "a middle tone"})
    write_qrels(root, "ord-qrels", [("q2", "c004", 1)])
    write_parquet(root / "ord-top_ranked" / "test-00000-of-00001.parquet", {"query-id": ["q2"], "corpus-ids": [["c003", "c004"]]})
    configs = []
    for sub in ("neg", "ord"):
        configs.append({"config_name": f"{sub}-corpus", "data_files": [{"split": "test", "path": "shared/test-*.parquet"}]})
        configs.append({"config_name": f"{sub}-queries", "data_files": [{"split": "test", "path": f"{sub}-queries/*.parquet"}]})
        configs.append({"config_name": f"{sub}-qrels", "data_files": [{"split": "test", "path": f"{sub}-qrels/*.parquet"}]})
    configs.append({"config_name": "ord-top_ranked", "data_files": [{"split": "test", "path": "ord-top_ranked/*.parquet"}]})
    yaml = pytest.importorskip("yaml", reason="README configs are YAML (PyYAML, in the hf extra)")
    (root / "README.md").write_text("---\n" + yaml.safe_dump({"license": "cc0-1.0", "configs": configs}) + "---\n# card\n")
    bench = load_any_benchmark(root)
    assert dict(bench.queries.select("query_id", "task").rows()) == {"q0": "neg", "q1": "neg", "q2": "ord"}
    assert bench.clips.height == 8
    # a two-candidate top_ranked list with one relevant clip is the two-option pair
    assert bench.mc.rows() == [("q2", "c004", "c003")]
    one = load_hub(root, subset="ord")
    assert one.queries["query_id"].to_list() == ["q2"]


def test_csv_tables_with_audio_paths(tmp_path: Path):
    root = tmp_path / "hub"
    (root / "audio").mkdir(parents=True)
    for i in range(3):
        sf.write(root / "audio" / f"c{i}.flac", tone(i), SR)
    (root / "corpus").mkdir()
    (root / "corpus" / "test.csv").write_text("_id,audio\n" + "".join(f"c{i},audio/c{i}.flac\n" for i in range(3)))
    (root / "queries").mkdir()
    (root / "queries" / "test.csv").write_text('_id,text\nq0,"a tone, low"\n')
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq0\tc0\t1\n")
    bench = load_any_benchmark(root)
    assert bench.queries["text"].to_list() == ["a tone, low"]
    paths = bench.audio_paths()
    assert paths[1] == root / "audio" / "c1.flac"
    assert np.max(np.abs(load_mono(paths[1], SR) - tone(1))) < 1e-4


def test_refusals_name_the_problem(tmp_path: Path, hub: Path):
    # different corpora under two subsets cannot be ranked as one benchmark
    root = tmp_path / "two"
    write_corpus(root, "a-corpus", corpus_rows(4), shards=1)
    write_corpus(root, "b-corpus", corpus_rows(5), shards=1)
    for sub, q in (("a", "q0"), ("b", "q1")):
        write_queries(root, f"{sub}-queries", {q: "x"})
        write_qrels(root, f"{sub}-qrels", [(q, "c000", 1)])
    with pytest.raises(UserError, match="different corpora"):
        load_hub(root)
    assert load_hub(root, subset="b").clips.height == 5

    # no id column
    bad = tmp_path / "noid"
    write_parquet(bad / "corpus" / "test-00000-of-00001.parquet", {"key": ["c0"], "audio": ["x.wav"]})
    write_queries(bad, "queries")
    write_qrels(bad, "qrels")
    with pytest.raises(UserError, match=r"corpus.*'id' or '_id'"):
        load_hub(bad)

    # qrels without their columns
    (hub / "qrels" / "test-00000-of-00001.parquet").unlink()
    write_parquet(hub / "qrels" / "test-00000-of-00001.parquet", {"qid": ["q0"], "doc": ["c000"]})
    with pytest.raises(UserError, match="query-id, corpus-id, score"):
        load_hub(hub)

    # corrupt audio is reported with the shard and row when decoded
    rows = corpus_rows(2)
    rows[1]["audio"]["bytes"] = b"not audio at all"
    broken = tmp_path / "broken"
    write_corpus(broken, "corpus", rows, shards=1)
    write_queries(broken, "queries", {"q0": "x"})
    write_qrels(broken, "qrels", [("q0", "c000", 1)])
    ref = load_hub(broken).audio_paths()[1]
    with pytest.raises(UserError, match=r"test-00000-of-00001\.parquet#row=1/c001\.flac: cannot read audio"):
        load_mono(ref, SR)


def test_cli_refuses_an_unknown_folder_in_one_line(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "reasonaudio", "eval", str(tmp_path / "empty"), "--model", "oracle", "--out", str(tmp_path / "r")],
        capture_output=True, text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Hugging Face dataset folder" in proc.stderr


def test_subset_folders_without_readme_each_with_its_copy_of_the_corpus(tmp_path: Path):
    """`<subset>-corpus/` folders as mteb multi-subset datasets ship them: same clips, separate files."""
    root = tmp_path / "hub"
    rows = corpus_rows(6)
    for sub, queries, qrels in (("negation", {"q0": "a"}, [("q0", "c001", 1)]), ("order", {"q1": "b", "q2": "c"}, [("q1", "c002", 1), ("q2", "c005", 1)])):
        write_corpus(root, f"{sub}-corpus", rows, shards=2)
        write_queries(root, f"{sub}-queries", queries)
        write_qrels(root, f"{sub}-qrels", qrels)
    bench = load_any_benchmark(root)
    assert bench.clips.height == 6
    assert bench.queries.select("query_id", "task").rows() == [("q0", "negation"), ("q1", "order"), ("q2", "order")]
    assert bench.manifest["params"]["subsets"] == ["negation", "order"]


def test_readme_data_files_as_plain_patterns(tmp_path: Path):
    yaml = pytest.importorskip("yaml", reason="README configs are YAML (PyYAML, in the hf extra)")
    root = tmp_path / "hub"
    write_corpus(root, "c", corpus_rows(3), shards=1, split="train")
    write_queries(root, "q", {"q0": "a"}, split="train")
    write_qrels(root, "r", [("q0", "c002", 1)], split="train")
    configs = [{"config_name": "corpus", "data_files": "c/*.parquet"}, {"config_name": "queries", "data_files": ["q/*.parquet"]},
               {"config_name": "default", "data_files": "r/*.parquet"}]
    (root / "README.md").write_text("---\n" + yaml.safe_dump({"configs": configs}) + "---\n")
    bench = load_any_benchmark(root)
    assert bench.clips.height == 3 and bench.qrels.rows() == [("q0", "c002", 1)]
    # a pattern that matches nothing is named
    configs[0]["data_files"] = "missing/*.parquet"
    (root / "README.md").write_text("---\n" + yaml.safe_dump({"configs": configs}) + "---\n")
    with pytest.raises(UserError, match=r"configs entry 1: data_files .*missing/\*\.parquet.* match no file"):
        load_any_benchmark(root)


def test_audio_structs_without_bytes_name_files_beside_the_tables(tmp_path: Path):
    root = tmp_path / "hub"
    (root / "audio").mkdir(parents=True)
    for i in range(2):
        sf.write(root / "audio" / f"c{i}.wav", tone(i), SR)
    write_parquet(root / "corpus" / "test-00000-of-00001.parquet",
                  {"_id": ["c0", "c1"], "audio": [{"bytes": None, "path": f"audio/c{i}.wav"} for i in range(2)]},
                  pa.schema([("_id", pa.string()), ("audio", AUDIO_TYPE)]))
    write_queries(root, "queries", {"q0": "x"})
    write_qrels(root, "qrels", [("q0", "c1", 1)])
    refs = load_any_benchmark(root).audio_paths()
    assert np.max(np.abs(load_mono(refs[1], SR) - tone(1))) < 1e-4
    (root / "audio" / "c0.wav").unlink()
    with pytest.raises(UserError, match=r"test-00000-of-00001\.parquet: row 0: column 'audio' holds no audio bytes and 'audio/c0\.wav' is not a file"):
        load_mono(refs[0], SR)
