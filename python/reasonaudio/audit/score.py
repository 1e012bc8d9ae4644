"""Score listening-audit answers against the benchmark: agreement per task, kappa, disputed pairs.

The site holds no key, so relevance comes from BENCH's qrels here. Agreement counts a listener's
"satisfies" / "does not" answers that match relevance; "unsure" answers are counted, not scored.
Intervals are percentile bootstraps over cards (a card's clips share one query and one sitting, so
they are resampled together), seeded for byte-identical reports.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np
import polars as pl

from reasonaudio.audit.site import FORMAT_VERSION, JUDGMENTS_FORMAT, manifest_sha256
from reasonaudio.io.benchmark import TASKS, load_benchmark
from reasonaudio.errors import UserError

ANSWERS = ("yes", "no", "unsure")
_TAG_BOOTSTRAP = 0xB007


@dataclass
class Judgments:
    path: Path
    listener: str
    site_id: str
    answers: dict[tuple[str, str], str]  # (query_id, clip_id) -> yes | no | unsure


def read_judgments(path: str | Path, bench_root: Path, bench_hash: str, queries: set[str], clips: set[str]) -> Judgments:
    """Read one judgments.json written by the audit page; anything else is a UserError naming the
    file and the answer at fault."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: file not found")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a text file (expected judgments.json from the audit page)") from None
    except json.JSONDecodeError as err:
        raise UserError(f"{path}: invalid JSON at line {err.lineno}: {err.msg}") from None
    if not isinstance(doc, dict) or doc.get("format") != JUDGMENTS_FORMAT:
        raise UserError(f'{path}: not a judgments file of the audit page (expected "format": "{JUDGMENTS_FORMAT}")')
    if doc.get("version") != FORMAT_VERSION:
        raise UserError(f"{path}: judgments version {doc.get('version')!r} is not supported (expected {FORMAT_VERSION})")
    bench = doc.get("bench")
    their_hash = bench.get("manifest_sha256") if isinstance(bench, dict) else None
    if their_hash != bench_hash:
        raise UserError(
            f"{path}: made on a site built from another benchmark (manifest sha256 {str(their_hash)[:12]}..., "
            f"{bench_root / 'manifest.json'} is {bench_hash[:12]}...)"
        )
    rows = doc.get("answers")
    if not isinstance(rows, list):
        raise UserError(f'{path}: "answers" must be a list of {{query_id, clip_id, answer}} objects')
    answers: dict[tuple[str, str], str] = {}
    for i, row in enumerate(rows):
        where = f"{path}: answers[{i}]"
        if not isinstance(row, dict):
            raise UserError(f"{where}: expected an object with query_id, clip_id and answer")
        qid, cid, answer = row.get("query_id"), row.get("clip_id"), row.get("answer")
        if not isinstance(qid, str) or not isinstance(cid, str):
            raise UserError(f"{where}: query_id and clip_id must be strings, got {qid!r} and {cid!r}")
        if answer not in ANSWERS:
            raise UserError(f"{where}: answer must be one of {', '.join(ANSWERS)}, got {answer!r}")
        if qid not in queries:
            raise UserError(f"{where}: query {qid!r} is not in {bench_root / 'queries.parquet'}")
        if cid not in clips:
            raise UserError(f"{where}: clip {cid!r} is not in {bench_root / 'clips.parquet'}")
        if (qid, cid) in answers:
            raise UserError(f"{where}: a second answer for query {qid}, clip {cid}")
        answers[(qid, cid)] = answer
    listener = doc.get("listener")
    listener = listener.strip() if isinstance(listener, str) and listener.strip() else path.stem
    return Judgments(path, listener, str(doc.get("site_id", "")), answers)


def _unique_names(judgments: list[Judgments]) -> list[str]:
    names, seen = [], {}
    for j in judgments:
        seen[j.listener] = seen.get(j.listener, 0) + 1
        names.append(j.listener if seen[j.listener] == 1 else f"{j.listener}#{seen[j.listener]}")
    return names


def _bootstrap(agree: np.ndarray, decided: np.ndarray, n_boot: int, rng: np.random.Generator) -> tuple[float, float]:
    """95% percentile interval of sum(agree)/sum(decided) with cards resampled with replacement."""
    idx = rng.integers(0, agree.size, size=(n_boot, agree.size))
    num, den = agree[idx].sum(axis=1), decided[idx].sum(axis=1)
    ratio = num[den > 0] / den[den > 0]
    if ratio.size == 0:
        return float("nan"), float("nan")
    low, high = np.percentile(ratio, [2.5, 97.5])
    return float(low), float(high)


@dataclass
class AuditScore:
    bench: str
    listeners: list[dict]  # name, file, site_id, n_answers
    agreement: list[dict]  # listener, task, n_cards, n_answers, n_unsure, n_decided, n_agree, agreement, ci_low, ci_high
    kappa: list[dict]  # listener_a, listener_b, n_common, kappa
    disputed: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"bench": self.bench, "listeners": self.listeners, "agreement": self.agreement, "kappa": self.kappa, "disputed": self.disputed}

    def format_text(self, max_disputed: int = 20) -> str:
        def pct(x) -> str:
            return "   n/a" if x is None or x != x else f"{100 * x:5.1f}%"

        lines = [f"benchmark {self.bench}"]
        for l in self.listeners:
            lines.append(f"listener {l['name']}: {l['n_answers']} answers ({l['file']}, site {l['site_id']})")
        lines.append("")
        lines.append(f"{'listener':<16} {'task':<9} {'cards':>5} {'answers':>7} {'unsure':>6} {'agree':>11}  95% CI")
        for r in self.agreement:
            ci = "" if r["ci_low"] is None or r["ci_low"] != r["ci_low"] else f"[{pct(r['ci_low']).strip()}, {pct(r['ci_high']).strip()}]"
            lines.append(
                f"{r['listener'][:16]:<16} {r['task']:<9} {r['n_cards']:>5} {r['n_answers']:>7} {r['n_unsure']:>6} "
                f"{r['n_agree']:>4}/{r['n_decided']:<4}{pct(r['agreement'])}  {ci}"
            )
        for k in self.kappa:
            value = "n/a (fewer than two distinct answers)" if k["kappa"] is None else f"{k['kappa']:.3f}"
            lines.append(f"Cohen's kappa {k['listener_a']} vs {k['listener_b']}: {value} over {k['n_common']} common answers")
        lines.append("")
        lines.append(f"disputed (query, clip) pairs: {len(self.disputed)}")
        for d in self.disputed[:max_disputed]:
            said = ", ".join(f"{name} {answer}" for name, answer in d["answers"].items())
            lines.append(f"  {d['query_id']} {d['clip_id']} [{d['task']}] benchmark: {d['benchmark']}; {said}  ({d['reason']})")
            lines.append(f"    {d['inspect']}")
        if len(self.disputed) > max_disputed:
            lines.append(f"  ... and {len(self.disputed) - max_disputed} more (see disputed.csv with --out)")
        return "\n".join(lines)


def score(judgment_files: list[str | Path], bench_path: str | Path, *, seed: int = 0, n_boot: int = 2000) -> AuditScore:
    """Agreement of each listener with BENCH's relevance per task (bootstrap CIs), Cohen's kappa for
    every pair of listeners, and the disputed pairs (a listener contradicts the benchmark, or the
    listeners answer differently)."""
    from sklearn.metrics import cohen_kappa_score

    if not judgment_files:
        raise UserError("give at least one judgments.json")
    if n_boot < 1:
        raise UserError(f"--bootstrap must be at least 1, got {n_boot}")
    if seed < 0:
        raise UserError(f"--seed must be 0 or more, got {seed}")
    bench = load_benchmark(bench_path)
    bench_hash = manifest_sha256(bench.root)
    queries = {r["query_id"]: r for r in bench.queries.select("query_id", "task", "text").iter_rows(named=True)}
    clips = set(bench.clips["clip_id"].to_list())
    relevant = set(
        bench.qrels.filter(pl.col("relevance") > 0).select("query_id", "clip_id").iter_rows()
    )
    judgments = [read_judgments(p, bench.root, bench_hash, set(queries), clips) for p in judgment_files]
    names = _unique_names(judgments)
    tasks = [t for t in TASKS if any(queries[q]["task"] == t for j in judgments for q, _ in j.answers)]
    tasks += sorted({queries[q]["task"] for j in judgments for q, _ in j.answers} - set(tasks))

    agreement = []
    for name, j in zip(names, judgments):
        for ti, task in enumerate([*tasks, "all"]):
            per_card: dict[str, list[int]] = {}  # query -> [answers, unsure, decided, agree]
            for (qid, cid), answer in sorted(j.answers.items()):
                if task != "all" and queries[qid]["task"] != task:
                    continue
                c = per_card.setdefault(qid, [0, 0, 0, 0])
                c[0] += 1
                if answer == "unsure":
                    c[1] += 1
                    continue
                c[2] += 1
                c[3] += int((answer == "yes") == ((qid, cid) in relevant))
            if not per_card:
                continue
            counts = np.array(list(per_card.values()), dtype=np.int64)
            n_answers, n_unsure, n_decided, n_agree = (int(v) for v in counts.sum(axis=0))
            rate = n_agree / n_decided if n_decided else None
            low = high = None
            if n_decided:
                # one stream per task, not per listener: the same answers get the same interval
                rng = np.random.default_rng([seed, _TAG_BOOTSTRAP, ti])
                low, high = _bootstrap(counts[:, 3], counts[:, 2], n_boot, rng)
            agreement.append({
                "listener": name, "task": task, "n_cards": len(per_card), "n_answers": n_answers, "n_unsure": n_unsure,
                "n_decided": n_decided, "n_agree": n_agree, "agreement": rate, "ci_low": low, "ci_high": high,
            })

    kappa = []
    for (a, ja), (b, jb) in combinations(zip(names, judgments), 2):
        common = sorted(set(ja.answers) & set(jb.answers))
        xa, xb = [ja.answers[k] for k in common], [jb.answers[k] for k in common]
        # kappa is undefined when both listeners used one and the same answer throughout
        value = float(cohen_kappa_score(xa, xb, labels=list(ANSWERS))) if len(set(xa) | set(xb)) > 1 else None
        kappa.append({"listener_a": a, "listener_b": b, "n_common": len(common), "kappa": value})

    disputed = []
    root = shlex.quote(str(bench.root))
    for key in sorted(set().union(*(j.answers for j in judgments))):
        qid, cid = key
        given = {name: j.answers[key] for name, j in zip(names, judgments) if key in j.answers}
        is_relevant = key in relevant
        reasons = []
        if any(a != "unsure" and (a == "yes") != is_relevant for a in given.values()):
            reasons.append("contradicts the benchmark")
        if len(set(given.values())) > 1:
            reasons.append("listeners disagree")
        if reasons:
            disputed.append({
                "query_id": qid, "clip_id": cid, "task": queries[qid]["task"], "text": queries[qid]["text"],
                "benchmark": "relevant" if is_relevant else "not relevant", "answers": given, "reason": "; ".join(reasons),
                "inspect": f"reasonaudio inspect {root} {shlex.quote(cid)}",
                "inspect_query": f"reasonaudio inspect {root} {shlex.quote(qid)}",
            })

    listeners = [
        {"name": n, "file": str(j.path), "site_id": j.site_id, "n_answers": len(j.answers)} for n, j in zip(names, judgments)
    ]
    return AuditScore(str(bench.root), listeners, agreement, kappa, disputed)


def disputed_frame(result: AuditScore) -> pl.DataFrame:
    names = [l["name"] for l in result.listeners]
    schema = {c: pl.String for c in ("query_id", "clip_id", "task", "text", "benchmark", "reason", *names, "inspect", "inspect_query")}
    rows = [
        {**{k: d[k] for k in ("query_id", "clip_id", "task", "text", "benchmark", "reason")},
         **{n: d["answers"].get(n) for n in names}, "inspect": d["inspect"], "inspect_query": d["inspect_query"]}
        for d in result.disputed
    ]
    return pl.DataFrame(rows, schema=schema)
