"""Scoring model outputs on a compose set, in one of two modes.

`robust` (default) is this project's scoring, described below. `study` makes every decision as the
study's released code does (study.py; `_study_records` here) so that numbers compare with its
tables. Both produce the same Record per decision, written to samples.jsonl.

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
from typing import Any, Callable, Iterable, Optional, Sequence

from reasonaudio.compose import parse, study
from reasonaudio.compose.build import check_fingerprint, read_dataset
from reasonaudio.compose.io import read_jsonl
from reasonaudio.compose.normalize import normalize_text
from reasonaudio.compose.prompts import LAYERS, PROMPT_STYLES, layer_tags
from reasonaudio.errors import UserError

WER_NEITHER_THRESHOLD = 0.5
COMPOSITIONAL = ("compositional", "compositional_cot")
SCORINGS = ("robust", "study")
ERROR_CLASSES = ("correct", "distractor", "both", "neither")
SINGLE_ANSWER_LAYERS = ("selection",) + COMPOSITIONAL


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
    error_class: str | None = None   # correct / distractor / neither (study transcripts also: both)
    chosen: int | None = None        # segment the answer points to, when known


def word_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    ref = normalize_text(reference)
    hyp = normalize_text(hypothesis)
    n_ref = len(ref.split())
    if not hyp:
        return n_ref, n_ref
    out = study.jiwer_module().process_words(ref, hyp)
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


# A judge as used inside this module: (segment k or None, what to extract, options) -> text or None.
SampleJudge = Callable[[Optional[int], str, Optional[Sequence[str]]], Optional[str]]


def _labels(manifest: dict, cue: str, prompts: str) -> tuple[dict[str, str], list[str], list[str | None]]:
    """Each cue value's name as the prompts list it, the option names and their phrases."""
    values = [c["value"] for c in manifest["cue_values"]]
    if prompts == "study":
        names = {v: study.study_label(cue, v) for v in values}
        return names, [names[v] for v in values], [names[v].replace("_", " ") for v in values]
    return {v: v for v in values}, values, [c.get("phrase") for c in manifest["cue_values"]]


def _sample_records(manifest: dict, row: dict, layer: str, output: str, judge: SampleJudge | None,
                    prompts: str = "project") -> list[Record]:
    task = row["task"]
    segs = row["segments"]
    target = row["target_segment"]
    names, options, phrases = _labels(manifest, row["cue"], prompts)
    tags = layer_tags(layer, task, row["cue"], prompts)
    parsers = ["strict", "lenient"] + (["judge"] if judge is not None else [])
    records: list[Record] = []

    def rec(parser: str, seg: int, **kw: Any) -> Record:
        return Record(row["id"], layer, parser, seg, target, seg == target, segs[seg - 1]["cue_value"],
                      row.get("snr_db"), **kw)

    def content(parser: str, tag: str, k: int | None, what: str, opts=None) -> str | None:
        if parser == "strict":
            return parse.strict_tag(output, tag)
        if parser == "judge":
            return judge(k, what, opts)
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
                records.append(rec(parser, k, correct=pred == names[segs[k - 1]["cue_value"]]))
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


def _study_aliases(manifest: dict, seg: dict) -> list[str]:
    """The alias list as the study stores it: normalised aliases (a set imported from the study keeps its own)."""
    if manifest.get("origin") == "study":
        return list(seg["answers"])
    return [study.qa_normalize(a) for a in seg["answers"]]


def _study_records(manifest: dict, row: dict, layer: str, output: str, judge: SampleJudge | None,
                   prompts: str = "project") -> list[Record]:
    """Every decision as the study's code makes it (see study.py for the file each rule comes from)."""
    task, cue = row["task"], row["cue"]
    segs = row["segments"]
    target = row["target_segment"]
    names, options, _ = _labels(manifest, cue, prompts)
    tags = layer_tags(layer, task, cue, prompts)
    parsers = ["strict", "lenient"] + (["judge"] if judge is not None else [])
    stripped = output.strip()
    records: list[Record] = []

    def rec(parser: str, seg: int, **kw: Any) -> Record:
        return Record(row["id"], layer, parser, seg, target, seg == target, segs[seg - 1]["cue_value"],
                      row.get("snr_db"), **kw)

    for parser in parsers:
        if layer == "recognition":
            for k in (1, 2):
                if parser == "strict":  # grader.py's rule on the tags the recognition grader reads
                    text = study.strict_extract(output, tags[k - 1], underscore_optional=cue == "environment")
                elif parser == "judge":
                    text = judge(k, f"the {cue} named for segment {k}", options)
                elif cue == "environment":
                    text = study.open_tag(stripped, tags[k - 1], tags[1] if k == 1 else None)
                else:
                    text = study.closed_tag(output, tags[k - 1])
                gold = study.attribute_normalize(names[segs[k - 1]["cue_value"]])
                records.append(rec(parser, k, correct=study.attribute_normalize(text) == gold))
        elif layer == "selection":
            if parser == "strict":
                choice = study.strict_choice(output, tags[0])
            elif parser == "lenient":
                choice = study.lenient_choice(output, tags[0])
            else:
                text = judge(None, "the segment number chosen (1 or 2)", ["1", "2"])
                choice = study.content_to_index(text) if text else None
            cls = "neither" if choice is None else ("correct" if choice == target else "distractor")
            records.append(rec(parser, target, correct=choice == target, error_class=cls, chosen=choice))
        elif layer == "atomic":
            for k in (1, 2):
                seg, tag, nxt = segs[k - 1], tags[k - 1], (tags[1] if k == 1 else None)
                what = f"the {'transcript' if task == 'asr' else 'answer'} given for segment {k}"
                text = study.strict_extract(output, tag) if parser == "strict" else \
                    judge(k, what, None) if parser == "judge" else None
                r = rec(parser, k)
                if task == "asr":
                    if parser == "lenient":
                        text = study.open_tag(stripped, tag, nxt)
                    r.errors, r.ref_words = study.word_errors(seg["text"], text or "")
                elif task == "math":
                    gold = seg["answers"][0]
                    if parser == "lenient":
                        r.correct = study.dual_math_answer(output, tag, nxt) == gold.strip()
                    else:
                        r.correct = study.math_match(text, gold)
                else:
                    if parser == "lenient":
                        found = study.qa_normalize_spaced(study.open_tag(output, tag, nxt, underscore_optional=False)
                                                          or "")
                        r.correct = bool(found) and found in _study_aliases(manifest, seg)
                    else:
                        r.correct = study.qa_match(text, seg["answers"])
                records.append(r)
        else:
            seg, other = segs[target - 1], segs[2 - target]
            what = f"the final {'transcript' if task == 'asr' else 'answer'}"
            text = study.strict_extract(output, tags[0]) if parser == "strict" else \
                judge(None, what, None) if parser == "judge" else None
            r = rec(parser, target)
            if task == "asr":
                if parser == "lenient":
                    text = study.asr_transcript(output, tags[0])
                r.errors, r.ref_words = study.word_errors(seg["text"], text or "")
                r.error_class = study.asr_class(seg["text"], other["text"],
                                                f"{segs[0]['text']} {segs[1]['text']}".strip(), text or "")
                records.append(r)
                continue
            if task == "math":
                gold, dgold = seg["answers"][0].strip(), other["answers"][0].strip()
                if parser == "lenient":
                    pred = study.math_answer(output, tags[0])
                    r.correct, hit_other = pred == gold, pred == dgold
                else:
                    r.correct, hit_other = study.math_match(text, gold), study.math_match(text, dgold)
            elif parser == "lenient":
                norm = study.qa_normalize if cue == "environment" else study.qa_normalize_spaced
                found = norm(study.closed_tag(output, tags[0]) or "")
                r.correct = bool(found) and found in {norm(a) for a in _study_aliases(manifest, seg)}
                hit_other = bool(found) and found in {norm(a) for a in _study_aliases(manifest, other)}
            else:
                r.correct, hit_other = study.qa_match(text, seg["answers"]), study.qa_match(text, other["answers"])
            r.error_class = "correct" if r.correct else "distractor" if hit_other else "neither"
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




def _metric(records: list[Record], task: str, layer: str, scoring: str = "robust") -> dict[str, Any]:
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
        names = [c for c in ERROR_CLASSES if c != "both" or "both" in classes]
        out["error_classes"] = {c: 100.0 * classes.count(c) / len(classes) for c in names}
    if layer in SINGLE_ANSWER_LAYERS:
        chose = []
        for r in records:
            if layer == "selection":
                chose.append(r.chosen)
            else:
                other = 2 if r.target_segment == 1 else 1
                chose.append(r.target_segment if r.error_class == "correct" else other if r.error_class == "distractor" else None)
        sdt = study.signal_detection if scoring == "study" else signal_detection
        out["position"] = sdt([r.target_segment == 1 for r in records], chose)
    return out


def _value(m: dict[str, Any]) -> float | None:
    return m.get(m.get("metric", ""))


def _sample_judge(judge: parse.Judge | None, row: dict[str, Any] | None) -> SampleJudge | None:
    """A user judge sees the raw output; LLM-extracted answers carried by an output row (the study's
    `llm_extracted_answers` / `llm_extraction_successful`) are read per segment."""
    output = row["output"] if row else ""
    if judge is not None:
        return lambda k, what, options: judge(output, what, options)
    if row is None or "llm_extracted_answers" not in row:
        return None
    answers, ok = row.get("llm_extracted_answers") or [], row.get("llm_extraction_successful")

    def read(k: int | None, what: str, options: Sequence[str] | None) -> str | None:
        i = (k or 1) - 1
        if i >= len(answers) or (ok is not None and i < len(ok) and not ok[i]):
            return None
        return answers[i] if isinstance(answers[i], str) else None
    return read


def score_dataset(directory: str | Path, outputs: str | Path | list[dict], judge: parse.Judge | None = None,
                  scoring: str = "robust", prompts: str | None = None,
                  other_sets: Sequence[str | Path] = ()) -> dict[str, Any]:
    """Score one set. `scoring`: 'robust' (this project's parsers) or 'study' (the study's code's
    decisions); `prompts`: the prompt style the outputs answered ('project' or 'study'; default: the
    set's own, 'study' for a set imported from the study). Outputs of another set (by their
    set_fingerprint) are refused; `other_sets`, scored alongside, are named when they are theirs."""
    if scoring not in SCORINGS:
        raise UserError(f"--scoring must be one of {', '.join(SCORINGS)}, got {scoring!r}")
    manifest, rows = read_dataset(directory)
    prompts = prompts or manifest.get("prompts", "project")
    if prompts not in PROMPT_STYLES:
        raise UserError(f"--prompts must be one of {', '.join(PROMPT_STYLES)}, got {prompts!r}")
    by_id = {r["id"]: r for r in rows}
    out_rows = read_jsonl(outputs, ("id", "layer", "output")) if not isinstance(outputs, list) else outputs
    check_fingerprint(out_rows, outputs if not isinstance(outputs, list) else "outputs", directory, "model outputs",
                      "score each outputs file with the set it was run on", other_sets)
    seen: dict[tuple[str, str], dict[str, Any]] = {}
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
        seen[key] = o
    layers = [layer for layer in LAYERS if any(k[1] == layer for k in seen)]
    task = manifest["params"]["task"]
    cue = manifest["params"]["cue"]
    with_judge = judge is not None or any("llm_extracted_answers" in o for o in seen.values())
    sample_records = _study_records if scoring == "study" else _sample_records
    records: list[Record] = []
    compliance: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    missing: dict[str, int] = {}
    for layer in layers:
        missing[layer] = 0
        for row in rows:
            out_row = seen.get((row["id"], layer))
            if out_row is None:
                missing[layer] += 1
            output = out_row["output"] if out_row else ""
            for tag in layer_tags(layer, task, cue, prompts):
                if scoring == "robust":
                    found = bool(parse.strict_tag(output, tag))  # an empty tag is not an answer
                elif layer == "selection":
                    found = study.selection_compliant(output, tag)
                else:
                    found = study.strict_extract(output, tag) is not None
                compliance[layer][tag].append(found)
            sj = _sample_judge(judge, out_row)
            if with_judge and sj is None:
                sj = lambda k, what, options: None  # noqa: E731 - no extraction for this output
            records.extend(sample_records(manifest, row, layer, output, sj, prompts))
    parsers = ["strict", "lenient"] + (["judge"] if with_judge else [])
    snrs = sorted({r.snr_db for r in records if r.snr_db is not None})
    groups: dict[str, Any] = {"all": lambda r: True}
    for s in snrs:
        groups[f"snr={s:g}"] = (lambda s: lambda r: r.snr_db == s)(s)
    result: dict[str, Any] = {
        "dataset": {"path": str(directory), "cue": cue, "task": task, "n_samples": len(rows),
                    "cue_values": [c["value"] for c in manifest["cue_values"]], "snrs": snrs or None},
        "scoring": scoring, "prompts": prompts,
        "parsers": parsers, "layers": {}, "missing_outputs": missing,
        "chance": {"recognition": 100.0 / len(manifest["cue_values"]), "selection": 50.0},
        "format_compliance": {layer: {tag: 100.0 * sum(v) / len(v) for tag, v in tags.items()}
                              for layer, tags in compliance.items()},
    }
    for layer in layers:
        result["layers"][layer] = {}
        for parser in parsers:
            recs = [r for r in records if r.layer == layer and r.parser == parser]
            entry = {g: _metric([r for r in recs if f(r)], task, layer, scoring) for g, f in groups.items()}
            entry["by_target_value"] = {v: _metric([r for r in recs if r.is_target and r.cue_value == v], task, layer,
                                                   scoring)
                                        for v in result["dataset"]["cue_values"]}
            if layer == "atomic":
                by_group = {g: _metric([r for r in recs if r.is_target and f(r)], task, layer, scoring)
                            for g, f in groups.items()}
                entry["target_only"] = by_group["all"]
                entry["target_only_by_group"] = by_group
            result["layers"][layer][parser] = entry
    result["gap"] = _gaps(result, list(groups))
    result["parser_gap_pp"] = {
        layer: {g: _diff(_value(result["layers"][layer]["lenient"][g]), _value(result["layers"][layer]["strict"][g]))
                for g in groups}
        for layer in layers
    }
    order = {r["id"]: i for i, r in enumerate(rows)}
    records.sort(key=lambda r: (order[r.id], LAYERS.index(r.layer), parsers.index(r.parser), r.segment))
    result["_samples"] = [sample_row(r, task) for r in records]
    return result


def sample_row(r: Record, task: str) -> dict[str, Any]:
    """One decision as a samples.jsonl row."""
    asr = task == "asr" and r.layer != "recognition" and r.layer != "selection"
    return {"id": r.id, "layer": r.layer, "segment": None if r.layer in SINGLE_ANSWER_LAYERS else r.segment,
            "parser": r.parser, "correct": None if asr else bool(r.correct),
            "chosen": r.chosen if r.layer == "selection" else None,
            "word_errors": r.errors if asr else None, "ref_words": r.ref_words if asr else None,
            "error_class": r.error_class}


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
                atomic_t = layers["atomic"][parser]["target_only_by_group"].get(g)
                c = layers[comp][parser][g]
                out.setdefault(comp, {}).setdefault(parser, {})[g] = {
                    "metric": c.get("metric"), "atomic": _value(atomic), "compositional": _value(c),
                    "change_pp": _diff(_value(c), _value(atomic)),
                    "change_vs_target_pp": _diff(_value(c), _value(atomic_t)) if atomic_t else None,
                }
    return out
