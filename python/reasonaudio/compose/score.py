"""Scoring model outputs on a compose set.

Each output row {id, layer, output} is read by the strict parser, the lenient parser and (in the
Python API) an optional judge, and turned into per-segment records (atomic layers score each
segment independently) or per-sample records (selection, compositional). Aggregates:

- accuracy for recognition (chance 1/#values) and selection (chance 1/2); exact match for math;
  alias match for facts; corpus WER for transcription (normalised text, see normalize.py);
- error classes for selection and compositional layers: correct / distractor / neither. For a
  transcript the class is the reference with the lower WER, or 'neither' when both WERs exceed 0.5;
  a lenient factual answer that names both segments' answers counts as 'neither';
- position bias on selection (and the choice implied by compositional answers): P(choose first)
  among valid choices, balanced accuracy (invalid counts as wrong), d' and criterion c with
  'target first' as signal and 'choose 1' as the yes response, rates corrected log-linearly
  ((k + 0.5) / (n + 1), Hautus 1995) so rates of 0 or 1 stay finite; c < 0 means a bias to segment 1;
- atomic -> compositional change in percentage points, against the atomic score over both segments
  and over the target segment only;
- format compliance: share of outputs whose tag the strict parser found, per layer and tag.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any, Iterable

import jiwer

from reasonaudio.compose import parse
from reasonaudio.compose.build import read_dataset
from reasonaudio.compose.io import read_jsonl
from reasonaudio.compose.normalize import normalize_text
from reasonaudio.compose.prompts import LAYERS, layer_tags
from reasonaudio.errors import UserError

WER_NEITHER_THRESHOLD = 0.5
COMPOSITIONAL = ("compositional", "compositional_cot")


@dataclass
class Record:
    id: str
    layer: str
    parser: str
    segment: int            # the segment scored (1 or 2)
    target_segment: int
    is_target: bool
    cue_value: str
    snr_db: float | None
    correct: bool | None = None      # accuracy-type tasks
    errors: int = 0                  # transcription: substitutions + deletions + insertions
    ref_words: int = 0
    error_class: str | None = None   # correct / distractor / neither
    chosen: int | None = None        # segment the answer points to, when known


def word_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    ref = normalize_text(reference)
    hyp = normalize_text(hypothesis)
    n_ref = len(ref.split())
    if not hyp:
        return n_ref, n_ref
    out = jiwer.process_words(ref, hyp)
    return out.substitutions + out.deletions + out.insertions, n_ref


def z(p: float) -> float:
    return NormalDist().inv_cdf(p)


def signal_detection(target_first: Iterable[bool], chose: Iterable[int | None]) -> dict[str, Any]:
    """P(choose 1), balanced accuracy, d' and c from target positions and choices (None = no valid choice)."""
    pairs = list(zip(target_first, chose))
    n1 = sum(1 for t, _ in pairs if t)
    n2 = len(pairs) - n1
    valid = [(t, c) for t, c in pairs if c in (1, 2)]
    hits = sum(1 for t, c in valid if t and c == 1)
    false_alarms = sum(1 for t, c in valid if not t and c == 1)
    n1_valid = sum(1 for t, _ in valid if t)
    n2_valid = len(valid) - n1_valid
    correct1 = hits
    correct2 = sum(1 for t, c in valid if not t and c == 2)
    out: dict[str, Any] = {"n": len(pairs), "n_valid": len(valid)}
    out["p_choose_first"] = sum(1 for _, c in valid if c == 1) / len(valid) if valid else None
    out["balanced_accuracy"] = (correct1 / n1 + correct2 / n2) / 2 if n1 and n2 else None
    if n1_valid and n2_valid:
        hit_rate = (hits + 0.5) / (n1_valid + 1)
        fa_rate = (false_alarms + 0.5) / (n2_valid + 1)
        out["hit_rate"], out["false_alarm_rate"] = hit_rate, fa_rate
        out["d_prime"] = z(hit_rate) - z(fa_rate)
        out["criterion_c"] = -(z(hit_rate) + z(fa_rate)) / 2
    else:
        out["hit_rate"] = out["false_alarm_rate"] = out["d_prime"] = out["criterion_c"] = None
    return out


def _classify_wer(wer_target: float, wer_distractor: float) -> str:
    if min(wer_target, wer_distractor) > WER_NEITHER_THRESHOLD:
        return "neither"
    return "correct" if wer_target <= wer_distractor else "distractor"


def _sample_records(manifest: dict, row: dict, layer: str, output: str, judge) -> list[Record]:
    task = row["task"]
    segs = row["segments"]
    target = row["target_segment"]
    options = [c["value"] for c in manifest["cue_values"]]
    phrases = [c.get("phrase") for c in manifest["cue_values"]]
    tags = layer_tags(layer, task)
    parsers = ["strict", "lenient"] + (["judge"] if judge is not None else [])
    records: list[Record] = []

    def rec(parser: str, seg: int, **kw: Any) -> Record:
        return Record(row["id"], layer, parser, seg, target, seg == target, segs[seg - 1]["cue_value"],
                      row.get("snr_db"), **kw)

    def content(parser: str, tag: str, k: int | None, what: str, opts=None) -> str | None:
        if parser == "strict":
            return parse.strict_tag(output, tag)
        if parser == "judge":
            return judge(output, what, opts)
        found = parse.lenient_tag(output, tag)
        if found is not None:
            return found
        if k is None:
            return output
        regions = parse.split_segments(output)
        return regions[k - 1] if regions else None

    for parser in parsers:
        if layer == "recognition":
            unsplit = parser == "lenient" and all(parse.lenient_tag(output, t) is None for t in tags) \
                and parse.split_segments(output) is None
            mentions = parse.option_mentions(output, options, phrases) if unsplit else []
            for k, tag in ((1, tags[0]), (2, tags[1])):
                what = f"the {manifest['params']['cue']} named for segment {k}"
                if unsplit:
                    pred = mentions[k - 1] if len(mentions) >= k else None
                else:
                    text = content(parser, tag, k, what, options)
                    pred = parse.strict_option(text, options, phrases) if parser != "lenient" \
                        else parse.lenient_option(text, options, phrases)
                records.append(rec(parser, k, correct=pred == segs[k - 1]["cue_value"]))
        elif layer == "selection":
            text = content(parser, tags[0], None, "the segment number chosen (1 or 2)", ["1", "2"])
            choice = parse.lenient_choice(text) if parser == "lenient" else parse.strict_choice(
                text.strip() if text else text)
            cls = "neither" if choice is None else ("correct" if choice == target else "distractor")
            records.append(rec(parser, target, correct=choice == target, error_class=cls, chosen=choice))
        elif layer == "atomic":
            unsplit = parser == "lenient" and all(parse.lenient_tag(output, t) is None for t in tags) \
                and parse.split_segments(output) is None
            numbers = parse.parse_numbers(output) if unsplit and task == "math" else []
            for k, tag in ((1, tags[0]), (2, tags[1])):
                seg = segs[k - 1]
                what = f"the {'transcript' if task == 'asr' else 'answer'} given for segment {k}"
                if unsplit:
                    text = output if task == "facts" or (task == "asr" and k == 1) else ""
                else:
                    text = content(parser, tag, k, what)
                records.append(_downstream(rec(parser, k), task, parser, text, seg, None,
                                           numbers[-2 + k - 1] if len(numbers) >= 2 else None))
        else:
            what = f"the final {'transcript' if task == 'asr' else 'answer'}"
            text = content(parser, tags[0], None, what)
            r = _downstream(rec(parser, target), task, parser, text, segs[target - 1], segs[2 - target], None)
            records.append(r)
    return records


def _downstream(r: Record, task: str, parser: str, text: str | None, seg: dict, other: dict | None,
                unsplit_number: str | None) -> Record:
    answers = seg["answers"]
    if task == "asr":
        hyp = text or ""
        if parser == "lenient":
            hyp = parse.lenient_transcript(hyp)
        r.errors, r.ref_words = word_errors(seg["text"], hyp)
        if other is not None:
            e2, n2 = word_errors(other["text"], hyp)
            r.error_class = _classify_wer(r.errors / max(r.ref_words, 1), e2 / max(n2, 1))
        return r
    if task == "math":
        if parser == "lenient":
            pred = unsplit_number if unsplit_number is not None else parse.lenient_number(text)
        else:
            pred = parse.strict_number(text)
        gold = {parse.strict_number(a) for a in answers}
        r.correct = pred is not None and pred in gold
        hit_other = other is not None and pred is not None and pred in {parse.strict_number(a) for a in other["answers"]}
    else:
        match = parse.alias_in if parser == "lenient" else parse.strict_alias
        hit = match(text, answers)
        hit_other = other is not None and match(text, other["answers"])
        r.correct = hit and not hit_other
    if other is not None:
        r.error_class = "correct" if r.correct else ("distractor" if hit_other and not (task == "facts" and hit) else "neither")
    return r


def _metric(records: list[Record], task: str, layer: str) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(records)}
    if not records:
        return out
    if layer in ("atomic",) + COMPOSITIONAL and task == "asr":
        ref = sum(r.ref_words for r in records)
        out["wer"] = 100.0 * sum(r.errors for r in records) / ref if ref else None
        out["metric"] = "wer"
    else:
        out["accuracy"] = 100.0 * sum(bool(r.correct) for r in records) / len(records)
        out["metric"] = "accuracy"
    classes = [r.error_class for r in records if r.error_class]
    if classes:
        out["error_classes"] = {c: 100.0 * classes.count(c) / len(classes) for c in ("correct", "distractor", "neither")}
    if layer == "selection" or layer in COMPOSITIONAL:
        chose = []
        for r in records:
            if layer == "selection":
                chose.append(r.chosen)
            else:
                other = 2 if r.target_segment == 1 else 1
                chose.append(r.target_segment if r.error_class == "correct" else other if r.error_class == "distractor" else None)
        out["position"] = signal_detection([r.target_segment == 1 for r in records], chose)
    return out


def _value(m: dict[str, Any]) -> float | None:
    return m.get(m.get("metric", ""))


def score_dataset(directory: str | Path, outputs: str | Path | list[dict], judge: parse.Judge | None = None) -> dict[str, Any]:
    manifest, rows = read_dataset(directory)
    by_id = {r["id"]: r for r in rows}
    out_rows = read_jsonl(outputs, ("id", "layer", "output")) if not isinstance(outputs, list) else outputs
    seen: dict[tuple[str, str], str] = {}
    for i, o in enumerate(out_rows, 1):
        where = f"{outputs}:{i}" if not isinstance(outputs, list) else f"output row {i}"
        if o["id"] not in by_id:
            raise UserError(f"{where}: id {o['id']!r} is not a sample of {directory}")
        if o["layer"] not in LAYERS:
            raise UserError(f"{where}: layer {o['layer']!r} is not one of {', '.join(LAYERS)}")
        if not isinstance(o["output"], str):
            raise UserError(f"{where}: 'output' must be a string")
        key = (o["id"], o["layer"])
        if key in seen:
            raise UserError(f"{where}: a second output for id {o['id']!r} layer {o['layer']!r}")
        seen[key] = o["output"]
    layers = [layer for layer in LAYERS if any(k[1] == layer for k in seen)]
    task = manifest["params"]["task"]
    cue = manifest["params"]["cue"]
    records: list[Record] = []
    compliance: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    missing: dict[str, int] = {}
    for layer in layers:
        missing[layer] = 0
        for row in rows:
            output = seen.get((row["id"], layer))
            if output is None:
                missing[layer] += 1
                output = ""
            for tag in layer_tags(layer, task):
                compliance[layer][tag].append(parse.strict_tag(output, tag) is not None)
            records.extend(_sample_records(manifest, row, layer, output, judge))
    parsers = ["strict", "lenient"] + (["judge"] if judge is not None else [])
    snrs = sorted({r.snr_db for r in records if r.snr_db is not None})
    groups: dict[str, Any] = {"all": lambda r: True}
    for s in snrs:
        groups[f"snr={s:g}"] = (lambda s: lambda r: r.snr_db == s)(s)
    result: dict[str, Any] = {
        "dataset": {"path": str(directory), "cue": cue, "task": task, "n_samples": len(rows),
                    "cue_values": [c["value"] for c in manifest["cue_values"]], "snrs": snrs or None},
        "parsers": parsers, "layers": {}, "missing_outputs": missing,
        "chance": {"recognition": 100.0 / len(manifest["cue_values"]), "selection": 50.0},
        "format_compliance": {layer: {tag: 100.0 * sum(v) / len(v) for tag, v in tags.items()}
                              for layer, tags in compliance.items()},
    }
    for layer in layers:
        result["layers"][layer] = {}
        for parser in parsers:
            recs = [r for r in records if r.layer == layer and r.parser == parser]
            entry = {g: _metric([r for r in recs if f(r)], task, layer) for g, f in groups.items()}
            entry["by_target_value"] = {v: _metric([r for r in recs if r.is_target and r.cue_value == v], task, layer)
                                        for v in result["dataset"]["cue_values"]}
            if layer == "atomic":
                entry["target_only"] = _metric([r for r in recs if r.is_target], task, layer)
            result["layers"][layer][parser] = entry
    result["gap"] = _gaps(result, list(groups))
    result["parser_gap_pp"] = {
        layer: {g: _diff(_value(result["layers"][layer]["lenient"][g]), _value(result["layers"][layer]["strict"][g]))
                for g in groups}
        for layer in layers
    }
    return result


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _gaps(result: dict[str, Any], groups: list[str]) -> dict[str, Any]:
    layers = result["layers"]
    if "atomic" not in layers:
        return {}
    out: dict[str, Any] = {}
    for comp in COMPOSITIONAL:
        if comp not in layers:
            continue
        for parser in result["parsers"]:
            for g in groups:
                atomic = layers["atomic"][parser][g]
                atomic_t = layers["atomic"][parser]["target_only"] if g == "all" else None
                c = layers[comp][parser][g]
                out.setdefault(comp, {}).setdefault(parser, {})[g] = {
                    "metric": c.get("metric"), "atomic": _value(atomic), "compositional": _value(c),
                    "change_pp": _diff(_value(c), _value(atomic)),
                    "change_vs_target_pp": _diff(_value(c), _value(atomic_t)) if atomic_t else None,
                }
    return out
