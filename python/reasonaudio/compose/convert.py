"""Converters between a compose set and the study's file layout (its released dataset and scripts).

The study's subset folder: `metadata.jsonl` (one row per sample: `concat_id`, `audio_path` relative to
the folder, `cue_type` `bg_noise` / `gender` / `emotion`, `order` `target_first` / `target_second`,
zero-based `target_index`, `target_*` / `distractor_*` labels, and `sequence`: two objects in time
order with `id`, `gender`, `emotion`, `bg_category`, `question` (also the transcription reference),
`expected_answer` (math) or `expected_answers` (normalised aliases, factual QA) and `snr_db`) plus
the WAV files. Labels are the study's names (study.study_label).

`export_study` writes that layout so the study's scripts run on a set built here; each row also
carries a `reasonaudio` object (the original row) and the folder a `reasonaudio_manifest.json`,
which the study's scripts ignore and `import_study` uses to restore the set exactly.
`import_study` reads the study's layout (derived fields where there is no `reasonaudio` object)
and converts its per-task prediction files into this project's outputs rows.
"""

from __future__ import annotations

import contextlib

import hashlib
import json
import random
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from reasonaudio.compose.io import FINGERPRINT, read_jsonl, write_jsonl_atomic
from reasonaudio.compose.prompts import LAYERS
from reasonaudio.compose.study import qa_normalize, study_label
from reasonaudio.errors import UserError
from reasonaudio.io.outputs import check_distinct, output_directory, output_file

CUE_TYPE = {"environment": "bg_noise", "gender": "gender", "emotion": "emotion"}
MANIFEST_COPY = "reasonaudio_manifest.json"
GAP_SECONDS = 1.5

# The study's task names (baseline_eval.py) and the layer each one is.
STUDY_TASKS: dict[str, str] = {}
for _c in ("env", "gender", "emo"):
    STUDY_TASKS[f"{_c}_dual_base"] = "recognition"
    STUDY_TASKS[f"{_c}_seg_idx_select"] = "selection"
    for _t in ("math", "trivia_qa", "asr"):
        STUDY_TASKS[f"{_c}_{_t}_select"] = "compositional"
    for _t in ("math", "trivia_qa"):
        STUDY_TASKS[f"{_c}_{_t}_select_cot"] = "compositional_cot"
for _t in ("math", "trivia_qa", "asr"):
    STUDY_TASKS[f"{_t}_dual_base"] = "atomic"


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


def study_row(row: dict[str, Any]) -> dict[str, Any]:
    """One sample in the study's metadata layout (without the `reasonaudio` copy)."""
    cue, task = row["cue"], row["task"]
    target = row["target_segment"]
    seqs = []
    for k, seg in enumerate(row["segments"], 1):
        s: dict[str, Any] = {"id": f"{row['id']}_{k}", "gender": seg.get("gender"),
                             "emotion": study_label("emotion", seg.get("emotion")), "question": seg["text"]}
        # the study's gender/emotion sets repeat the gender in bg_category (its legacy field)
        s["bg_category"] = study_label("environment", seg.get("background")) if cue == "environment" \
            else seg.get("gender")
        if task == "math":
            s["expected_answer"] = seg["answers"][0]
        elif task == "facts":
            s["expected_answers"] = _unique([qa_normalize(a) for a in seg["answers"]])
        if seg.get("snr_db") is not None:
            s["snr_db"] = seg["snr_db"]
        seqs.append(s)
    out: dict[str, Any] = {"concat_id": row["id"], "audio_path": f"audios/{row['id']}.wav",
                           "cue_type": CUE_TYPE[cue], "order": "target_first" if target == 1 else "target_second",
                           "target_index": target - 1}
    t, d = seqs[target - 1], seqs[2 - target]
    if cue == "environment":
        out["target_bg_category"], out["distractor_bg_category"] = t["bg_category"], d["bg_category"]
    else:
        out["target_gender"], out["distractor_gender"] = t["gender"], d["gender"]
        out["target_emotion"], out["distractor_emotion"] = t["emotion"], d["emotion"]
    out["sequence"] = seqs
    return out


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        dst.hardlink_to(src)
    except OSError:
        shutil.copyfile(src, dst)


def export_study(directory: str | Path, out: str | Path, force: bool = False) -> int:
    from reasonaudio.compose.build import read_dataset

    directory, out = Path(directory), Path(out)
    manifest, rows = read_dataset(directory)
    with output_directory(out, 'study set', inputs=[directory], force=force) as tmp:
        (tmp / "audios").mkdir()
        lines = []
        for row in rows:
            src = directory / row["audio"]
            if not src.is_file():
                raise UserError(f"{directory}/metadata.jsonl, sample {row['id']}: audio {src} is missing")
            srow = study_row(row)
            _link_or_copy(src, tmp / srow["audio_path"])
            lines.append(json.dumps(dict(srow, reasonaudio=row), ensure_ascii=False) + "\n")
        (tmp / "metadata.jsonl").write_text("".join(lines), encoding="utf-8")
        (tmp / MANIFEST_COPY).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return len(rows)


# ---------------------------------------------------------------------------------------------
# import

def _cue_of(srow: dict[str, Any], cue: str | None, where: str) -> str:
    if cue:
        return cue
    kind = srow.get("cue_type")
    if kind == "bg_noise":
        return "environment"
    if kind == "gender":
        return "gender"
    raise UserError(f"{where}: cue_type {kind!r} — the study's gender/emotion sets serve both cues; "
                    "pass --cue gender or --cue emotion")


def _task_of(seqs: list[dict[str, Any]], task: str | None) -> str:
    if task:
        return task
    if all("expected_answer" in s for s in seqs):
        return "math"
    if all("expected_answers" in s for s in seqs):
        return "facts"
    return "asr"


def _target_index(srow: dict[str, Any], cue: str, task: str) -> int:
    # The study's environment transcription run ignores target_index and draws the target with
    # random.Random(concat_id).choice(sequence) (src/evaluators/asr_eval.py); the others read
    # target_index and fall back to that same draw without it.
    if "target_index" not in srow or (cue == "environment" and task == "asr"):
        return srow["sequence"].index(random.Random(srow["concat_id"]).choice(srow["sequence"]))
    return int(srow["target_index"])


def _derived_row(srow: dict[str, Any], cue: str, task: str, where: str) -> dict[str, Any]:
    seqs = srow["sequence"]
    ti = _target_index(srow, cue, task)
    if ti not in (0, 1):
        raise UserError(f"{where}: target_index must be 0 or 1, got {ti!r}")
    segments = []
    for k, s in enumerate(seqs, 1):
        if not isinstance(s.get("question"), str) or not s["question"].strip():
            raise UserError(f"{where}: sequence[{k - 1}] has no 'question' text")
        if task == "math":
            if "expected_answer" not in s:
                raise UserError(f"{where}: sequence[{k - 1}] has no 'expected_answer' (needed for --task math)")
            answers = [str(s["expected_answer"]).strip()]
        elif task == "facts":
            answers = s.get("expected_answers")
            if not isinstance(answers, list) or not answers:
                raise UserError(f"{where}: sequence[{k - 1}] has no 'expected_answers' list (needed for --task facts)")
            answers = [str(a) for a in answers]
        else:
            answers = []
        env = cue == "environment"
        value = s.get("bg_category") if env else s.get(cue)
        if not isinstance(value, str) or not value:
            field = "bg_category" if env else cue
            raise UserError(f"{where}: sequence[{k - 1}] has no '{field}' (the {cue} cue)")
        segments.append({
            "answers": answers, "background": s.get("bg_category") if env else None,
            "background_phrase": s["bg_category"].replace("_", " ") if env else None,
            "cue_value": value.lower(), "emotion": s.get("emotion"), "end_sample": None,
            "gender": s.get("gender"), "level": None, "origin": s.get("id"), "segment": k,
            "snr_db": s.get("snr_db"), "speaker": None, "start_sample": None, "text": s["question"]})
    if segments[0]["cue_value"] == segments[1]["cue_value"]:
        raise UserError(f"{where}: both segments have {cue} {segments[0]['cue_value']!r}; the target is not unique")
    t, d = segments[ti], segments[1 - ti]
    return {"id": srow["concat_id"], "cue": cue, "task": task, "target_segment": ti + 1,
            "target_value": t["cue_value"], "target_phrase": t["cue_value"].replace("_", " "),
            "distractor_value": d["cue_value"], "snr_db": t["snr_db"], "segments": segments}


def import_study(directory: str | Path, out: str | Path, cue: str | None = None, task: str | None = None,
                 predictions: Sequence[str | Path] | None = None, outputs: str | Path | None = None,
                 force: bool = False) -> tuple[int, int, Path | None]:
    import soundfile as sf

    directory, out = Path(directory), Path(out)
    meta = directory / "metadata.jsonl"
    if not meta.is_file():
        raise UserError(f"{directory} has no metadata.jsonl; expected the study's subset layout "
                        "(metadata.jsonl and the audio its audio_path fields name)")
    srows = read_jsonl(meta, ("concat_id", "audio_path", "sequence"))
    saved = directory / MANIFEST_COPY
    original = json.loads(saved.read_text(encoding="utf-8")) if saved.is_file() else None
    restore = original is not None and all(isinstance(r.get("reasonaudio"), dict) for r in srows) \
        and (cue is None or cue == original["params"]["cue"]) and (task is None or task == original["params"]["task"])
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for lineno, srow in enumerate(srows, 1):
        where = f"{meta}:{lineno}"
        if not isinstance(srow["sequence"], list) or len(srow["sequence"]) != 2:
            raise UserError(f"{where}: 'sequence' must list exactly two segments")
        if srow["concat_id"] in seen:
            raise UserError(f"{where}: concat_id {srow['concat_id']!r} appears twice")
        seen.add(srow["concat_id"])
        if restore:
            rows.append(dict(srow["reasonaudio"]))
        else:
            c = _cue_of(srow, cue, where)
            rows.append(dict(_derived_row(srow, c, _task_of(srow["sequence"], task), where),
                             audio=f"audio/{_safe(srow['concat_id'])}.wav", _src=srow["audio_path"], _where=where))
    if not rows:
        raise UserError(f"{meta} has no samples")
    if not restore and len({(r["cue"], r["task"]) for r in rows}) != 1:
        raise UserError(f"{meta}: samples differ in cue or task; import them as separate sets")
    from reasonaudio.compose.build import set_fingerprint
    from reasonaudio.compose.io import OUTPUTS_FILE

    with contextlib.ExitStack() as claims:
        # an --outputs file of its own is claimed with the set, before the work (distinct from it)
        if predictions and outputs:
            check_distinct([("--out", out), ("--outputs", outputs)])
        tmp = claims.enter_context(output_directory(out, 'compose set', inputs=[directory], force=force))
        outputs_tmp = None
        if predictions and outputs:
            outputs_tmp = claims.enter_context(output_file(outputs, OUTPUTS_FILE, inputs=[directory, *predictions],
                                                           force=force, option="--outputs"))
        (tmp / "audio").mkdir()
        digest = hashlib.sha256()
        rates = set()
        for srow, row in zip(srows, rows):
            src = directory / srow["audio_path"]
            if not src.is_file():
                raise UserError(f"{row.pop('_where', meta)}: audio_path {srow['audio_path']!r} "
                                f"does not exist in {directory}")
            _link_or_copy(src, tmp / row["audio"])
            if not restore:
                row.pop("_src"), row.pop("_where")
                info = sf.info(str(src))
                rates.add(int(info.samplerate))
                row.update(num_samples=int(info.frames), sample_rate=int(info.samplerate), gain=1.0,
                           audio_sha256=hashlib.sha256(src.read_bytes()).hexdigest())
            digest.update(row["audio_sha256"].encode())
        data = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows).encode()
        (tmp / "metadata.jsonl").write_bytes(data)
        manifest = original if restore else _manifest(rows, rates, data, digest.hexdigest(), directory)
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        n_out, out_path = 0, None
        if predictions:
            n_out = _write_outputs(predictions, rows, outputs_tmp if outputs_tmp is not None else tmp / "study_outputs.jsonl",
                                   set_fingerprint(tmp))
            out_path = Path(outputs) if outputs else out / "study_outputs.jsonl"
    return len(rows), n_out, out_path


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]", "_", name)


def _manifest(rows: list[dict[str, Any]], rates: set[int], data: bytes, audio_digest: str,
              source: Path) -> dict[str, Any]:
    cue, task = rows[0]["cue"], rows[0]["task"]
    values = _unique([s["cue_value"] for r in rows for s in r["segments"]])
    snrs = sorted({r["snr_db"] for r in rows if r["snr_db"] is not None})

    def count(key: str) -> dict[str, int]:
        return dict(sorted(Counter(str(r[key]) for r in rows).items()))

    return {
        "format": "reasonaudio-compose", "format_version": 1, "origin": "study", "prompts": "study",
        "source": str(source), "n_samples": len(rows), "gap_seconds": GAP_SECONDS,
        "params": {"cue": cue, "task": task, "n": len(rows), "snrs": snrs or None,
                   "sample_rate": min(rates) if len(rates) == 1 else sorted(rates), "seed": None,
                   "speech": "study", "atoms": "study" if cue == "environment" else None},
        "cue_values": [{"value": v, "phrase": v.replace("_", " "), "atom": None} for v in values],
        "counts": {"target_segment": count("target_segment"), "target_value": count("target_value"),
                   "distractor_value": count("distractor_value"), "snr_db": count("snr_db")},
        "hashes": {"metadata.jsonl": hashlib.sha256(data).hexdigest(), "audio": audio_digest},
    }


_CUE_PREFIX = {"env": "environment", "gender": "gender", "emo": "emotion"}


def _layer_of(path: Path, cue: str) -> str:
    name = path.name
    for task in sorted(STUDY_TASKS, key=len, reverse=True):
        if re.search(rf"(?:^|_){re.escape(task)}(?:$|[._])", name):
            file_cue = _CUE_PREFIX.get(task.split("_")[0])
            if file_cue is not None and file_cue != cue:
                raise UserError(f"{path}: the study task {task} cues {file_cue}, this set's cue is {cue}")
            return STUDY_TASKS[task]
    raise UserError(f"{path}: cannot tell the study task from the file name (expected one of its task names, "
                    f"e.g. ..._env_math_select.jsonl); pass LAYER={path}")


def _write_outputs(predictions: Sequence[str | Path], rows: list[dict[str, Any]], out: Path, fingerprint: str) -> int:
    ids = {r["id"]: i for i, r in enumerate(rows)}
    env_asr = rows[0]["cue"] == "environment" and rows[0]["task"] == "asr"
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for spec in predictions:
        spec = str(spec)
        layer, _, file = spec.partition("=") if "=" in spec and spec.split("=", 1)[0] in LAYERS else ("", "", spec)
        path = Path(file)
        layer = layer or _layer_of(path, rows[0]["cue"])
        if env_asr and layer == "selection":
            raise UserError(f"{path}: the study's environment transcription targets differ from its selection "
                            "targets (random.Random(concat_id) vs target_index); import selection files with "
                            "--task math or facts")
        for lineno, p in enumerate(read_jsonl(path, ("concat_id", "prediction_raw")), 1):
            if p.get("flip_target"):
                continue  # a counterfactual run cueing the other segment
            if p["concat_id"] not in ids:
                raise UserError(f"{path}:{lineno}: concat_id {p['concat_id']!r} is not a sample of the set")
            if not isinstance(p["prediction_raw"], str):
                raise UserError(f"{path}:{lineno}: 'prediction_raw' must be a string")
            key = (p["concat_id"], layer)
            if key in found:
                raise UserError(f"{path}:{lineno}: a second {layer} prediction for {p['concat_id']!r}")
            row = {"id": p["concat_id"], "layer": layer, "output": p["prediction_raw"], FINGERPRINT: fingerprint}
            for extra in ("llm_extracted_answers", "llm_extraction_successful"):
                if extra in p:
                    row[extra] = p[extra]
            found[key] = row
    ordered = sorted(found.values(), key=lambda r: (ids[r["id"]], LAYERS.index(r["layer"])))
    write_jsonl_atomic(out, ordered)
    return len(ordered)
