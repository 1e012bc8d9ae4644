"""audit: the listening site (sampling, blindness, determinism, layout) and `audit score` (agreement,
bootstrap intervals, kappa, disputed pairs, refusals of bad judgments files) on the hand-made fixture."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from reasonaudio.audit import build_site, plain_logic, score
from reasonaudio.audit.site import SPEC_HEIGHT, SPEC_WIDTH, manifest_sha256, sample_cards
from reasonaudio.cli import main
from reasonaudio.io.benchmark import load_benchmark
from reasonaudio.errors import UserError


@pytest.fixture(scope="module")
def bench(bf, tmp_path_factory) -> Path:
    return bf.write_benchmark(tmp_path_factory.mktemp("bench") / "fixture")


@pytest.fixture(scope="module")
def site(bench: Path, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("site") / "site"
    return out, build_site(bench, out, per_task=50, seed=3, extra=1)


def read_cards_js(site_dir: Path) -> dict:
    text = (site_dir / "cards.js").read_text()
    prefix = "window.REASONAUDIO_AUDIT = "
    assert text.startswith(prefix) and text.endswith(";\n")
    return json.loads(text[len(prefix):-2])


def judgments(data: dict, answers: dict[tuple[str, str], str], listener: str = "ann") -> dict:
    """A judgments.json as the page writes it (see audit.js `judgments()`)."""
    rows = [{"query_id": q, "clip_id": c, "position": 0, "answer": a} for (q, c), a in answers.items()]
    return {
        "format": "reasonaudio-audit-judgments", "version": 1, "site_id": data["site_id"], "bench": data["bench"],
        "params": data["params"], "listener": listener, "saved_at": "2026-01-01T00:00:00Z",
        "n_cards": len(data["cards"]), "n_cards_answered": 0, "answers": rows,
    }


def write_json(path: Path, doc) -> Path:
    path.write_text(json.dumps(doc))
    return path


def tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------------------------------ site


def test_plain_logic_words() -> None:
    phrases = {"dog_bark": "a dog barking", "siren": "a siren wailing", "rain": "rain falling"}
    logic = json.dumps({"all": [
        {"has": "dog_bark"}, {"not": "siren"}, {"before": ["dog_bark", "siren"]}, {"overlap": ["rain", "thunder"]},
        {"duration": {"label": "rain", "min_s": 4.0}}, {"duration": {"label": "rain", "max_s": 2.5}},
        {"duration": {"label": "rain", "min_s": 1, "max_s": 2}},
    ]})
    assert plain_logic(logic, phrases) == [
        "contains a dog barking",
        "does not contain a siren wailing",
        "a dog barking ends before a siren wailing starts",
        "rain falling and thunder are heard at the same time",  # no phrase: the label in words
        "rain falling lasts at least 4 seconds",
        "rain falling lasts at most 2.5 seconds",
        "rain falling lasts between 1 and 2 seconds",
    ]


def test_site_layout_and_cards(bf, site, bench: Path) -> None:
    out, data = site
    assert sorted(p.name for p in out.iterdir()) == [".reasonaudio-output", "audio", "audit.css", "audit.js", "cards.js", "index.html", "spec"]
    assert read_cards_js(out) == data
    assert data["bench"]["manifest_sha256"] == manifest_sha256(bench)
    assert re.fullmatch(r"[0-9a-f]{16}", data["site_id"])
    # the fixture has fewer than 50 queries per task: every query with a pair is a card, once
    assert sorted(c["query_id"] for c in data["cards"]) == sorted(bf.MC)
    for card in data["cards"]:
        ids = [c["clip_id"] for c in card["clips"]]
        pos, neg = bf.MC[card["query_id"]]
        assert pos in ids and neg in ids and len(ids) == len(set(ids)) and 2 <= len(ids) <= 3
        for clip in card["clips"]:
            assert (out / clip["audio"]).read_bytes() == (bench / "audio" / f"{clip['clip_id']}.wav").read_bytes()
            from PIL import Image

            with Image.open(out / clip["spectrogram"]) as im:
                assert im.size == (SPEC_WIDTH, SPEC_HEIGHT) and im.mode == "P"
    q0 = next(c for c in data["cards"] if c["query_id"] == "q0000")
    assert q0["text"] == "a dog barking but no siren"
    assert q0["logic"] == ["contains a dog barking", "does not contain a siren wailing"]
    # the page and its data reach nothing outside the site (no CDN, no absolute URL)
    for name in ("index.html", "audit.js", "audit.css", "cards.js"):
        assert not re.search(r"https?://|//cdn|fetch\(", (out / name).read_text()), name


def test_extra_clips_contain_the_query_sounds(bf, site, bench: Path) -> None:
    _, data = site
    events = load_benchmark(bench).events
    labels = {}
    for row in events.iter_rows(named=True):
        labels.setdefault(row["clip_id"], set()).add(row["label"])
    # q0002 (overlap rain/thunder): clips with rain and thunder, beyond the pair, are 0003, 0009, 0010
    card = next(c for c in data["cards"] if c["query_id"] == "q0002")
    extra = {c["clip_id"] for c in card["clips"]} - set(bf.MC["q0002"])
    assert len(extra) == 1 and extra <= {"clip0003", "clip0009", "clip0010"}
    for card in data["cards"]:
        needed = {"q0000": {"dog_bark"}, "q0001": {"dog_bark", "siren"}, "q0004": {"whistle", "rain"}}.get(card["query_id"])
        if needed:
            assert all(needed <= labels[c["clip_id"]] for c in card["clips"])


def test_the_site_holds_no_key(site) -> None:
    out, data = site
    text = (out / "cards.js").read_text().lower()
    for word in ("positive", "negative", "relevan", "qrels", "mc.parquet"):
        assert word not in text
    allowed = {"query_id", "task", "text", "logic", "clips"}
    assert all(set(card) == allowed for card in data["cards"])
    assert all(set(c) == {"clip_id", "audio", "spectrogram", "duration_s"} for card in data["cards"] for c in card["clips"])


def test_clip_order_is_blind(bf, bench: Path) -> None:
    """Where the positive sits is a coin flip per card, not a rule a listener could learn."""
    b = load_benchmark(bench)
    first = [card.clip_ids[0] == bf.MC[card.query_id][0] for seed in range(40) for card in sample_cards(b, 50, seed)]
    assert len(first) == 40 * 9
    assert 0.4 < sum(first) / len(first) < 0.6


def test_sampling_per_task_and_seed(bench: Path) -> None:
    b = load_benchmark(bench)
    one = sample_cards(b, 1, seed=0)
    assert sorted(c.task for c in one) == ["duration", "mix", "negation", "order", "overlap"]
    picks = {tuple(sorted(c.query_id for c in sample_cards(b, 1, seed=s))) for s in range(12)}
    assert len(picks) > 1  # the seed chooses which queries
    assert [c.query_id for c in sample_cards(b, 1, seed=5)] == [c.query_id for c in sample_cards(b, 1, seed=5)]


def test_same_seed_same_bytes(bench: Path, tmp_path: Path) -> None:
    a = build_site(bench, tmp_path / "a", per_task=2, seed=11, extra=1)
    b = build_site(bench, tmp_path / "b", per_task=2, seed=11, extra=1)
    assert a == b and tree_digest(tmp_path / "a") == tree_digest(tmp_path / "b")
    c = build_site(bench, tmp_path / "c", per_task=2, seed=12, extra=1)
    assert c["site_id"] != a["site_id"]


def test_site_refusals(bench: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "site"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    with pytest.raises(UserError, match="not empty"):
        build_site(bench, out)
    assert (out / "keep.txt").is_file()
    # --force replaces only an earlier site, never a folder of someone else's files
    with pytest.raises(UserError, match="holds no reasonaudio audit site"):
        build_site(bench, out, per_task=1, force=True)
    assert (out / "keep.txt").is_file()
    site = tmp_path / "site2"
    build_site(bench, site, per_task=1)
    with pytest.raises(UserError, match="pass --force"):
        build_site(bench, site, per_task=1)
    build_site(bench, site, per_task=2, force=True)
    assert (site / "index.html").is_file()
    with pytest.raises(UserError, match="--per-task must be at least 1"):
        build_site(bench, tmp_path / "s2", per_task=0)
    with pytest.raises(UserError, match="--seed must be 0 or more, got -1"):
        build_site(bench, tmp_path / "s2", seed=-1)
    assert main(["audit", str(bench)]) == 2
    assert "needs --out SITE" in capsys.readouterr().err
    assert main(["audit", str(bench), str(bench), "--out", str(tmp_path / "s3")]) == 2
    assert "one benchmark directory" in capsys.readouterr().err
    assert main(["audit", str(tmp_path / "nope"), "--out", str(tmp_path / "s4")]) == 2
    err = capsys.readouterr().err
    assert "not a directory" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "s2").exists() and not (tmp_path / "s4").exists()


def test_missing_audio_leaves_no_half_site(bench: Path, tmp_path: Path) -> None:
    import shutil

    broken = Path(shutil.copytree(bench, tmp_path / "broken"))
    (broken / "audio" / "clip0004.wav").unlink()  # q0000's positive
    with pytest.raises(UserError, match="clip0004.wav: audio of clip clip0004 not found"):
        build_site(broken, tmp_path / "site")
    assert not (tmp_path / "site").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".site")]


# ----------------------------------------------------------------------------------------- score


def test_agreement_kappa_and_disputed(site, bench: Path, tmp_path: Path) -> None:
    _, data = site
    # q0000: clip0004 relevant, clip0000 not; q0001: clip0000 relevant, clip0001 not (hand-made qrels)
    a = {("q0000", "clip0004"): "yes", ("q0000", "clip0000"): "no", ("q0001", "clip0000"): "no", ("q0001", "clip0001"): "no",
         ("q0002", "clip0002"): "unsure"}
    b = {("q0000", "clip0004"): "yes", ("q0000", "clip0000"): "yes", ("q0001", "clip0000"): "no", ("q0001", "clip0001"): "no"}
    ja, jb = write_json(tmp_path / "a.json", judgments(data, a, "ann")), write_json(tmp_path / "b.json", judgments(data, b, "bob"))
    result = score([ja, jb], bench, seed=0, n_boot=500)
    rows = {(r["listener"], r["task"]): r for r in result.agreement}
    neg = rows[("ann", "negation")]
    assert (neg["n_cards"], neg["n_answers"], neg["n_decided"], neg["n_agree"], neg["agreement"]) == (1, 2, 2, 2, 1.0)
    assert rows[("ann", "order")]["agreement"] == 0.5
    assert rows[("ann", "overlap")]["n_unsure"] == 1 and rows[("ann", "overlap")]["agreement"] is None
    total = rows[("ann", "all")]
    assert (total["n_answers"], total["n_unsure"], total["n_decided"], total["n_agree"]) == (5, 1, 4, 3)
    # two cards decided: resampling them gives 1.0 (q0000 twice), 0.5 (q0001 twice) or 0.75
    assert total["ci_low"] == 0.5 and total["ci_high"] == 1.0
    assert rows[("bob", "all")]["agreement"] == 0.5
    # common answers: yes/yes, no/yes, no/no, no/no -> po = 3/4, pe = 1/2*1/4 + 1/2*3/4 = 1/2, kappa = 1/2
    (k,) = result.kappa
    assert (k["listener_a"], k["listener_b"], k["n_common"]) == ("ann", "bob", 4) and k["kappa"] == pytest.approx(0.5)
    disputed = {(d["query_id"], d["clip_id"]): d for d in result.disputed}
    assert set(disputed) == {("q0000", "clip0000"), ("q0001", "clip0000")}
    d = disputed[("q0000", "clip0000")]
    assert d["benchmark"] == "not relevant" and d["answers"] == {"ann": "no", "bob": "yes"}
    assert d["reason"] == "contradicts the benchmark; listeners disagree"
    assert d["inspect"] == f"reasonaudio inspect {bench} clip0000"
    assert disputed[("q0001", "clip0000")]["reason"] == "contradicts the benchmark"
    assert score([ja, jb], bench, seed=0, n_boot=500).to_dict() == result.to_dict()  # seeded bootstrap


def test_score_cli_writes_json_and_csv(site, bench: Path, tmp_path: Path, capsys) -> None:
    _, data = site
    a = {("q0000", "clip0004"): "yes", ("q0000", "clip0000"): "yes"}
    path = write_json(tmp_path / "judgments.json", judgments(data, a, ""))
    assert main(["audit", "score", str(path), "--bench", str(bench), "--out", str(tmp_path / "out"), "--bootstrap", "100"]) == 0
    text = capsys.readouterr().out
    assert "listener judgments: 2 answers" in text  # no name given: the file's stem
    assert "negation" in text and "1/2" in text and "50.0%" in text
    assert f"reasonaudio inspect {bench} clip0000" in text
    saved = json.loads((tmp_path / "out" / "score.json").read_text())
    assert saved["disputed"][0]["clip_id"] == "clip0000"
    csv = (tmp_path / "out" / "disputed.csv").read_text().splitlines()
    assert csv[0] == "query_id,clip_id,task,text,benchmark,reason,judgments,inspect,inspect_query"
    assert csv[1].startswith("q0000,clip0000,negation,a dog barking but no siren,not relevant,contradicts the benchmark,yes,")


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: "not json {", "invalid JSON at line 1"),
        (lambda d: [1, 2], "not a judgments file of the audit page"),
        (lambda d: {**d, "version": 7}, "judgments version 7 is not supported"),
        (lambda d: {**d, "bench": {"manifest_sha256": "ab" * 32}}, "made on a site built from another benchmark"),
        (lambda d: {**d, "answers": {"q0000": "yes"}}, '"answers" must be a list'),
        (lambda d: {**d, "answers": [{"query_id": "q0000", "clip_id": "clip0004", "answer": "maybe"}]}, r"answers\[0\]: answer must be one of yes, no, unsure, got 'maybe'"),
        (lambda d: {**d, "answers": [{"query_id": "q9999", "clip_id": "clip0004", "answer": "yes"}]}, r"answers\[0\]: query 'q9999' is not in"),
        (lambda d: {**d, "answers": [{"query_id": "q0000", "clip_id": 4, "answer": "yes"}]}, "must be strings"),
        (lambda d: {**d, "answers": [{"query_id": "q0000", "clip_id": "clip0004", "answer": "yes"}] * 2}, r"answers\[1\]: a second answer for query q0000, clip clip0004"),
    ],
)
def test_bad_judgments_are_clear_errors(site, bench: Path, tmp_path: Path, edit, message) -> None:
    _, data = site
    doc = edit(judgments(data, {("q0000", "clip0004"): "yes"}))
    path = tmp_path / "j.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    with pytest.raises(UserError, match=message) as err:
        score([path], bench, n_boot=10)
    assert str(path) in str(err.value)


def test_score_cli_refusals(site, bench: Path, tmp_path: Path, capsys) -> None:
    assert main(["audit", "score", str(tmp_path / "missing.json"), "--bench", str(bench)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"reasonaudio audit: error: {tmp_path / 'missing.json'}: file not found"
    assert main(["audit", "score", str(tmp_path / "x.json")]) == 2
    assert "needs --bench BENCH" in capsys.readouterr().err
    assert main(["audit", "score", "--bench", str(bench)]) == 2
    assert "at least one judgments.json" in capsys.readouterr().err
    assert main(["audit", "score", str(tmp_path / "x.json"), "--bench", str(bench), "--per-task", "3"]) == 2
    assert "--per-task does not apply to `audit score`" in capsys.readouterr().err
    assert main(["audit", str(bench), "--out", str(tmp_path / "s"), "--bootstrap", "10", "--json"]) == 2
    assert "--bootstrap, --json do not apply to building a site" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_hardlink_shares_the_audio_bytes(bench: Path, tmp_path: Path) -> None:
    data = build_site(bench, tmp_path / "linked", per_task=1, seed=0, hardlink=True)
    copied = build_site(bench, tmp_path / "copied", per_task=1, seed=0)
    assert data == copied and tree_digest(tmp_path / "linked") == tree_digest(tmp_path / "copied")
    clip = data["cards"][0]["clips"][0]
    source = bench / "audio" / f"{clip['clip_id']}.wav"
    assert (tmp_path / "linked" / clip["audio"]).stat().st_ino == source.stat().st_ino
    assert (tmp_path / "copied" / clip["audio"]).stat().st_ino != source.stat().st_ino


def test_site_cli(bench: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "site"
    assert main(["audit", str(bench), "--per-task", "1", "--seed", "2", "--extra", "1", "--out", str(out)]) == 0
    text = capsys.readouterr().out.splitlines()
    data = read_cards_js(out)
    assert text[0] == (f"wrote {out}: 5 cards (negation 1, order 1, overlap 1, duration 1, mix 1), "
                       f"{len({c['clip_id'] for card in data['cards'] for c in card['clips']})} clips, site id {data['site_id']}")
    assert text[1] == f"open {(out / 'index.html').resolve().as_uri()}"
    assert data["params"] == {"per_task": 1, "seed": 2, "extra": 1}
