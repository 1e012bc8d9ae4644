"""The study's prompt wording and tag names (`compose prompts --prompts study`).

Rendered from its evaluators (src/evaluators/*.py in steven-lunar/audio-compositionality-gap, prompt
variant 0 for selection) for this project's layers, so that a model asked in the study's words is
scored with the tags those words ask for: recognition `<event_k>` / `<gender_k>` / `<emotion_k>`,
selection `<ans>` with the segment number, atomic `<ans_k>` / `<asr_k>`, compositional `<ans>` /
`<asr>`. The study has no step-by-step transcription prompt, so `compositional_cot` is not rendered
for transcription sets. Labels are the study's (`sea_waves`, `chirping_birds`, `fear`, ...).
"""

from __future__ import annotations

from typing import Any

from reasonaudio.compose.study import EMOTION_ADJ, EMOTION_LABELS, ENV_LABELS, GENDER_NOUN, study_label

_LISTEN = "Listen to the audio carefully. "
_STAY_IN_LIST = ("Even if a different word feels like a more natural description, you must still pick the closest "
                 "match from the list given -- do NOT invent, add, or substitute a category that is not explicitly "
                 "listed above.")


def _categories(cue: str, values: list[str]) -> list[str]:
    """The study's fixed list (environment: only the classes this set has), then any other labels."""
    labels = [study_label(cue, v) for v in values]
    if cue == "environment":
        fixed = [c for c in ENV_LABELS if c in labels]
    elif cue == "gender":
        fixed = ["male", "female"]
    else:
        fixed = list(EMOTION_LABELS)
    return fixed + [x for x in labels if x not in fixed]


def _recognition(cue: str, categories: list[str]) -> str:
    listed = ", ".join(categories)
    if cue == "environment":
        return (f"{_LISTEN}It contains exactly TWO distinct trivia or math questions played sequentially, each mixed "
                "with a different background sound.\n"
                "Identify the background sound present in each segment, in the order they appear.\n"
                "CRITICAL INSTRUCTION: You MUST choose your answers ONLY from the following list of categories:\n"
                f"[{listed}]\n\n"
                "You MUST wrap your answer for the first segment's background sound inside <event_1> and </event_1> "
                "tags.\n"
                "You MUST wrap your answer for the second segment's background sound inside <event_2> and </event_2> "
                "tags.\n"
                "Do not output anything else.")
    if cue == "gender":
        noun, clause, note = "speaker's gender", "spoken by a speaker of a different gender", _STAY_IN_LIST
    else:
        noun, clause = "speaker's emotional tone", "spoken with a different emotional tone of voice"
        note = (f"{_STAY_IN_LIST} For example, do NOT answer 'neutral', 'calm' -- those are NOT in the list above; "
                f"you must pick whichever of [{listed}] is the closest match instead.")
    p, a, b = cue, categories[0], categories[1]
    return (f"{_LISTEN}It contains exactly TWO distinct trivia or math questions played sequentially, each {clause}.\n"
            f"Identify the {noun} in each segment, in the order they appear.\n"
            "CRITICAL INSTRUCTION: You MUST choose your answers ONLY from the following list of categories:\n"
            f"[{listed}]\n\n{note}\n\n"
            f"You MUST wrap your answer for the first segment's {noun} inside <{p}_1> and </{p}_1> tags.\n"
            f"You MUST wrap your answer for the second segment's {noun} inside <{p}_2> and </{p}_2> tags.\n"
            f"The tag names must be exactly '{p}_1' and '{p}_2' in every case -- do NOT use the category word itself "
            f"as the tag name. For example, do NOT write <{a}> or <{b}>; the category word goes INSIDE the tag as "
            "plain text, not as the tag name.\n"
            f"Format Example: <{p}_1>[answer_for_segment_1]</{p}_1><{p}_2>[answer_for_segment_2]</{p}_2>\n"
            "Do not output anything else.")


def _selection(cue: str, label: str) -> str:
    if cue == "environment":
        intro = "each mixed with a different background sound.\n"
        find = f"Find the segment that is accompanied by the '{label}' sound.\n"
    elif cue == "gender":
        intro = "one spoken by a male voice and one spoken by a female voice.\n"
        find = f"Find the segment that is spoken by the {GENDER_NOUN.get(label, label)}.\n"
    else:
        intro = "each spoken with a different emotional tone of voice.\n"
        find = f"Find the segment that is spoken by the {EMOTION_ADJ.get(label, label)}-sounding speaker.\n"
    return (f"{_LISTEN}It contains exactly TWO distinct spoken segments played sequentially, {intro}{find}"
            "Output ONLY its index (1 for the first segment, 2 for the second segment) inside <ans> and </ans> tags. "
            "Do not output any reasoning or other text.")


def _atomic(task: str) -> str:
    if task == "math":
        return (f"{_LISTEN}It contains exactly TWO distinct math problems played sequentially.\n"
                "Solve both problems in the exact order they appear.\n"
                "Output ONLY the final number for the first problem inside <ans_1> and </ans_1> tags.\n"
                "Output ONLY the final number for the second problem inside <ans_2> and </ans_2> tags.\n"
                "Do not output any reasoning, equations, or other text.")
    if task == "facts":
        return (f"{_LISTEN}It contains exactly TWO distinct trivia questions played sequentially.\n"
                "Answer both questions in the exact order they appear.\n"
                "CRITICAL INSTRUCTION: Provide the absolute shortest possible answer. Output ONLY the core entity, "
                "name, or word. DO NOT use full sentences.\n"
                "Output the concise answer for the first question inside <ans_1> and </ans_1> tags.\n"
                "Output the concise answer for the second question inside <ans_2> and </ans_2> tags.\n"
                "Do not output any reasoning or conversational text.")
    return (f"{_LISTEN}It contains exactly TWO distinct problems played sequentially. "
            "Each problem is mixed with a different background noise.\n"
            "Transcribe the problem for both segments exactly as you hear them.\n"
            "Output ONLY the transcription of the first problem inside <asr_1> and </asr_1> tags.\n"
            "Output ONLY the transcription of the second problem inside <asr_2> and </asr_2> tags.\n"
            "Do not output any reasoning, mathematical answers, or other text.")


def _who(cue: str, label: str) -> tuple[str, str, str]:
    """(how the two segments differ, 'the segment/problem that ...' phrase, CoT step 1)."""
    if cue == "environment":
        return ("each mixed with a different background noise", f"that is accompanied by the '{label}' sound",
                f"1. Identify which segment is accompanied by the '{label}' background sound.\n")
    if cue == "gender":
        noun = GENDER_NOUN.get(label, label)
        return ("one spoken by a male voice and one spoken by a female voice", f"that is asked by the {noun}",
                f"1. Identify which segment is spoken by the {noun}.\n")
    adj = EMOTION_ADJ.get(label, label)
    return ("each spoken with a different emotional tone of voice", f"spoken by the {adj}-sounding speaker",
            f"1. Identify which segment is spoken by the {adj}-sounding speaker.\n")


def _compositional(cue: str, task: str, label: str) -> str:
    if task == "asr":
        if cue == "environment":
            intro, find = "each mixed with a different background noise", f"accompanied by the sound of '{label}'"
        elif cue == "gender":
            intro, find = "each spoken by a speaker of a different gender", f"spoken by the {label} speaker"
        else:
            intro = "each spoken with a different emotional tone of voice"
            find = f"spoken by the {EMOTION_ADJ.get(label, label)}-sounding speaker"
        that = "that is " if cue == "environment" else ""
        return (f"{_LISTEN}It contains exactly TWO distinct problems played sequentially, {intro}.\n"
                f"Find the segment {that}{find}. Please transcribe EXACTLY what is spoken in that specific segment. "
                "You MUST wrap your final transcription inside <asr> and </asr> tags. "
                "Do not solve the problem and do not output any other explanations.")
    differ, which, _ = _who(cue, label)
    if task == "math":
        return (f"{_LISTEN}It contains exactly TWO distinct math problems played sequentially, {differ}.\n"
                f"Find the math problem {which} and calculate its answer.\n"
                "Output ONLY the final number inside <ans> and </ans> tags. "
                "Do not output any reasoning, equations, or other text.")
    return (f"{_LISTEN}It contains exactly TWO distinct trivia questions played sequentially, {differ}.\n"
            f"Find the trivia question {which} and answer it.\n"
            "CRITICAL INSTRUCTION: Provide the absolute shortest possible answer. Output ONLY the core entity, name, "
            "or word.\n"
            "Output the concise answer inside <ans> and </ans> tags. Do not output any reasoning or other text.")


def _compositional_cot(cue: str, task: str, label: str) -> str | None:
    if task == "asr":
        return None
    differ, _, step1 = _who(cue, label)
    head = (f"{_LISTEN}It contains exactly TWO distinct {'math problems' if task == 'math' else 'trivia questions'} "
            f"played sequentially, {differ}.\nThink through this step by step:\n{step1}")
    if task == "math":
        return (f"{head}2. State the math problem spoken in that segment.\n"
                "3. Compute the answer to that math problem.\n"
                "After your reasoning, output ONLY the final number inside <ans> and </ans> tags.\n"
                "The <ans> tag must contain only the final numeric answer -- no reasoning inside the tag itself.")
    if cue == "environment":
        return (f"{head}2. State the trivia question asked in that segment.\n"
                "3. Recall and determine the answer to that trivia question.\n"
                "After your reasoning, provide the absolute shortest possible answer: output ONLY the core entity, "
                "name, or word inside <ans> and </ans> tags.\n"
                "The <ans> tag must contain only the concise final answer -- no reasoning inside the tag itself.")
    return (f"{head}2. State the trivia question spoken in that segment.\n"
            "3. Answer that trivia question.\n"
            "After your reasoning, output ONLY the shortest possible answer (the core entity, name, or word) inside "
            "<ans> and </ans> tags.\n"
            "The <ans> tag must contain only the concise final answer -- no reasoning inside the tag itself.")


def study_prompt(manifest: dict[str, Any], row: dict[str, Any], layer: str) -> str | None:
    """The study's prompt for this sample and layer; None where the study has none."""
    cue, task = row["cue"], row["task"]
    label = study_label(cue, row["target_value"])
    if layer == "recognition":
        return _recognition(cue, _categories(cue, [c["value"] for c in manifest["cue_values"]]))
    if layer == "selection":
        return _selection(cue, label)
    if layer == "atomic":
        return _atomic(task)
    if layer == "compositional":
        return _compositional(cue, task, label)
    if layer == "compositional_cot":
        return _compositional_cot(cue, task, label)
    raise ValueError(layer)
