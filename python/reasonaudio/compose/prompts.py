"""Prompts for the four diagnostic layers on the same audio, plus a step-by-step compositional variant.

- recognition: name both segments' cue values (no selection, no downstream task);
- selection: say which segment the cue points to;
- atomic: transcribe / answer both segments (no selection);
- compositional: transcribe / answer only the segment the cue points to;
- compositional_cot: the same, asking for explicit steps before the final tagged answer.

Every answer goes inside XML tags so that a strict parser can read it. Two styles: `project` (the
wording below) and `study` (the study's own prompts and tag names, see study_prompts.py), so that
answers produced under either score with the tags they were asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reasonaudio.errors import UserError

LAYERS = ("recognition", "selection", "atomic", "compositional", "compositional_cot")
PROMPT_STYLES = ("project", "study")
INTRO = "The audio contains two speech segments, one after the other, separated by a pause."


def layer_tags(layer: str, task: str, cue: str = "environment", prompts: str = "project") -> tuple[str, ...]:
    study = prompts == "study"
    if layer == "recognition":
        if study and cue in ("gender", "emotion"):
            return (f"{cue}_1", f"{cue}_2")
        return ("event_1", "event_2")
    if layer == "selection":
        return ("ans",) if study else ("segment",)
    if layer == "atomic":
        return ("asr_1", "asr_2") if task == "asr" else ("ans_1", "ans_2")
    if layer in ("compositional", "compositional_cot"):
        return ("asr",) if task == "asr" else ("ans",)
    raise UserError(f"unknown layer {layer!r}; expected one of {', '.join(LAYERS)}")


def cue_description(cue: str, value: str, phrase: str) -> str:
    """Relative clause that points at a segment: 'the segment that ...'."""
    if cue == "environment":
        return f"has {phrase} in the background"
    if cue == "gender":
        return f"is spoken by a {value} speaker"
    return f"has a speaker who sounds {value}"


def _recognition_question(cue: str) -> str:
    return {
        "environment": "Which background sound is heard behind each segment?",
        "gender": "Is each segment spoken by a male or a female speaker?",
        "emotion": "Which emotion does the speaker express in each segment?",
    }[cue]


def _task_both(task: str) -> str:
    if task == "asr":
        return ("Transcribe each segment word for word. Reply with <asr_1>transcript of segment 1</asr_1> "
                "and <asr_2>transcript of segment 2</asr_2>.")
    kind = "an arithmetic question" if task == "math" else "a question"
    fmt = "the number" if task == "math" else "a short answer"
    return (f"Each segment asks {kind}. Answer both. Reply with <ans_1>{fmt} for segment 1</ans_1> "
            f"and <ans_2>{fmt} for segment 2</ans_2>.")


def _task_one(task: str) -> tuple[str, str]:
    if task == "asr":
        return "transcribe it word for word", "<asr>transcript</asr>"
    if task == "math":
        return "answer the arithmetic question asked in it", "<ans>the number</ans>"
    return "answer the question asked in it", "<ans>a short answer</ans>"


def make_prompts(manifest: dict[str, Any], row: dict[str, Any], layers: tuple[str, ...] = LAYERS,
                 style: str = "project") -> list[dict[str, Any]]:
    if style == "study":
        from reasonaudio.compose.study_prompts import study_prompt

        return [{"id": row["id"], "layer": layer, "audio": row["audio"], "prompt": text,
                 "tags": list(layer_tags(layer, row["task"], row["cue"], style))}
                for layer in layers if (text := study_prompt(manifest, row, layer)) is not None]
    if style != "project":
        raise UserError(f"--prompts must be one of {', '.join(PROMPT_STYLES)}, got {style!r}")
    cue, task = row["cue"], row["task"]
    options = ", ".join(c["value"] for c in manifest["cue_values"])
    desc = cue_description(cue, row["target_value"], row["target_phrase"])
    out = []
    for layer in layers:
        if layer == "recognition":
            text = (f"{INTRO} {_recognition_question(cue)} For each segment choose one of: {options}. "
                    "Reply with <event_1>answer for segment 1</event_1> and <event_2>answer for segment 2</event_2>.")
        elif layer == "selection":
            text = f"{INTRO} Which segment {desc}? Reply with <segment>1</segment> or <segment>2</segment>."
        elif layer == "atomic":
            text = f"{INTRO} {_task_both(task)}"
        elif layer == "compositional":
            action, fmt = _task_one(task)
            text = (f"{INTRO} Consider only the segment that {desc} and {action}; ignore the other segment. "
                    f"Reply with {fmt}.")
        elif layer == "compositional_cot":
            action, fmt = _task_one(task)
            text = (f"{INTRO} Consider only the segment that {desc} and {action}; ignore the other segment. "
                    f"Think step by step: first decide which segment {desc}, then recall what is said in that "
                    f"segment, then {action.split(' ', 1)[0]} it. After your reasoning, give only the final "
                    f"result as {fmt}.")
        else:
            raise UserError(f"unknown layer {layer!r}; expected one of {', '.join(LAYERS)}")
        out.append({"id": row["id"], "layer": layer, "audio": row["audio"], "prompt": text,
                    "tags": list(layer_tags(layer, task))})
    return out


def write_prompts(directory: str | Path, out: str | Path, layers: tuple[str, ...] = LAYERS,
                  style: str = "project") -> int:
    from reasonaudio.compose.build import read_dataset, set_fingerprint
    from reasonaudio.compose.io import FINGERPRINT, write_jsonl_atomic

    manifest, rows = read_dataset(directory)
    fingerprint = set_fingerprint(directory)  # `compose run --prompts FILE` refuses the prompts of another set
    prompts = [{**p, FINGERPRINT: fingerprint} for row in rows for p in make_prompts(manifest, row, layers, style)]
    write_jsonl_atomic(out, prompts)
    return len(prompts)
