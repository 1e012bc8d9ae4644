"""The study's own decision rules (Liu et al., 2026; code: github.com/steven-lunar/audio-compositionality-gap).

Re-implemented from a reading of its released scripts (nothing is imported from them) so that
`compose score --scoring study` decides every answer as the study's code does. Where each rule
comes from (file names in that repository):

- strict tag (`grader.py`, `asr_wer_eval.py`): the tag, matched case-insensitively, must open
  exactly once and close exactly once, open before close, with non-empty content after stripping;
- strict selection (`grade_seg_idx.py`): exactly one `<ans>...</ans>` pair (findall), non-empty, its
  content mapped through ordinals ("2", "2.", "second", "segment 2", "the first segment");
- lenient selection: `grade_seg_idx.py`'s fall-back chain (all tag pairs, then text patterns in
  priority order, the last mention of the first pattern class that matched);
- math: stripped strings compared exactly (no number words, "2.0" is not "2"); the evaluators'
  own extraction (`src/evaluators/extractor.py`) takes the last number inside the tag, else after
  "answer is"/"is", else the last number of the output; for two answers `<ans_?k>` may be unclosed;
- factual QA: Whisper's `EnglishTextNormalizer`, then lowercase, punctuation deleted, articles
  removed, whitespace collapsed, and exact equality with an alias (`grader.py`); the evaluators'
  own check uses their variant of that normaliser (`trivia_qa_eval.py`, `gender_eval.py`,
  `emotion_eval.py` replace punctuation and "_" by spaces; `env_trivia_qa_eval.py` deletes);
- recognition (`dual_atomic_grader.py`): environment tags `<event_?k>` (extractor.py: `<event1>` is
  `<event_1>`) may be unclosed, gender and emotion tags `<gender_k>` / `<emotion_k>` must be closed
  and keep their underscore; content lowercased, enclosing square brackets removed, then exact
  equality with the label. The study has no strict recognition grade: strict applies grader.py's
  tag rule to the tags that grader accepts (`<event_?k>`, `<gender_k>`, `<emotion_k>`);
- transcription (`asr_wer_eval.py`): Whisper-normalised reference and hypothesis, corpus WER with
  jiwer over lists (a missing tag is an empty hypothesis: all deletions); compositional answers are
  classed by the lowest WER against target, distractor and both segments joined, "neither"
  (the study's Other_Hallucination) when that minimum exceeds 0.8;
- position (`grade_seg_idx.py`): d' and c over all answers, an invalid answer counting as "did not
  choose segment 1", rates (k + 0.5) / (N + 1).

Labels: the study names environments `rain`, `sea_waves`, `crickets`, `chirping_birds`, `wind` and
emotions `angry`, `disgust`, `fear`, `happy`, `sad`; `study_label` maps this project's values.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache
from statistics import NormalDist
from typing import Any, Callable, Iterable, Optional, Sequence


ENV_LABELS = ("rain", "sea_waves", "crickets", "chirping_birds", "wind")  # the study's prompt order
EMOTION_LABELS = ("angry", "disgust", "fear", "happy", "sad")
EMOTION_ADJ = {"angry": "angry", "disgust": "disgusted", "fear": "fearful", "happy": "happy", "sad": "sad"}
GENDER_NOUN = {"male": "man", "female": "woman"}
ASR_OTHER_THRESHOLD = 0.8
_EMOTION_TO_STUDY = {"disgusted": "disgust", "fearful": "fear", "anger": "angry", "happiness": "happy",
                     "sadness": "sad"}
# The study's environment class for this project's labels: exact names, then a label's head noun.
_ENV_EXACT = {"rain_light": "rain", "rain_heavy": "rain", "rain": "rain", "crickets": "crickets",
              "cricket": "crickets", "wind_howl_low": "wind", "wind": "wind", "ocean_waves": "sea_waves",
              "sea_waves": "sea_waves", "waves": "sea_waves", "bird_trill": "chirping_birds",
              "chirping_birds": "chirping_birds", "bird_chirps": "chirping_birds", "birds": "chirping_birds"}
_ENV_HEAD = {"rain": "rain", "crickets": "crickets", "cricket": "crickets", "wind": "wind", "waves": "sea_waves",
             "sea": "sea_waves", "ocean": "sea_waves", "surf": "sea_waves", "birds": "chirping_birds",
             "bird": "chirping_birds", "birdsong": "chirping_birds"}


def study_label(cue: str, value: str | None) -> str | None:
    """The study's name for a cue value (unchanged when the study has no such class)."""
    if value is None:
        return None
    v = value.lower()
    if cue == "environment":
        return _ENV_EXACT.get(v) or _ENV_HEAD.get(v.split("_")[-1], value)
    if cue == "emotion":
        return _EMOTION_TO_STUDY.get(v, v)
    return v


# ---------------------------------------------------------------------------------------------
# normalisers

@lru_cache(maxsize=1)
def _whisper():
    from reasonaudio.errors import require

    return require("whisper_normalizer.english", "compose", "--scoring study (Whisper's English normaliser)").EnglishTextNormalizer()


@lru_cache(maxsize=1)
def jiwer_module():
    """jiwer, imported when a transcription is first scored (either mode), or the install hint: a set
    of math or facts is scored without it."""
    from reasonaudio.errors import require

    return require("jiwer", "compose", "scoring transcription (WER)")


def whisper_normalize(text: str) -> str:
    return _whisper()(text)


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)
_PUNCT_QUOTES = _PUNCT | set("\u2018\u2019\u00b4`")


def qa_normalize(text: Any) -> str:
    """grader.py's (and env_trivia_qa_eval.py's) answer normaliser: punctuation is deleted."""
    if not isinstance(text, str):
        return ""
    s = whisper_normalize(text).lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", s).split())


def qa_normalize_spaced(text: Any) -> str:
    """The trivia/gender/emotion evaluators' normaliser: punctuation and '_' become spaces."""
    s = whisper_normalize(str(text)).replace("_", " ").lower()
    s = "".join(" " if ch in _PUNCT_QUOTES else ch for ch in s)
    return " ".join(_ARTICLES.sub(" ", s).split()).strip()


def attribute_normalize(text: str | None) -> str:
    """dual_atomic_grader.py: lowercase, strip, drop enclosing [brackets] (repeatedly)."""
    if text is None:
        return ""
    x = text.strip().lower()
    while len(x) >= 2 and x.startswith("[") and x.endswith("]"):
        x = x[1:-1].strip()
    return x


# ---------------------------------------------------------------------------------------------
# tag extraction

def strict_extract(output: str, tag: str, underscore_optional: bool = False) -> str | None:
    """Exactly one opening and one closing tag (any case), in order, with non-empty content; with
    `underscore_optional`, `<event1>` counts as `<event_1>` (the spelling extractor.py accepts)."""
    if not isinstance(output, str) or not output.strip():
        return None
    base, digit = _split_tag(tag)
    name = f"{re.escape(base)}_?{digit}" if underscore_optional and digit else re.escape(tag)
    opens = list(re.finditer(f"<{name}>", output, flags=re.IGNORECASE))
    closes = list(re.finditer(f"</{name}>", output, flags=re.IGNORECASE))
    if len(opens) != 1 or len(closes) != 1 or opens[0].end() > closes[0].start():
        return None
    content = output[opens[0].end():closes[0].start()].strip()
    return content or None


def _split_tag(tag: str) -> tuple[str, str]:
    m = re.fullmatch(r"(.*?)_?(\d+)", tag)
    return (m.group(1), m.group(2)) if m else (tag, "")


def open_tag(output: str, tag: str, next_tag: str | None, underscore_optional: bool = True) -> str | None:
    """The evaluators' two-answer extraction: from `<tag>` to its closing tag, the next segment's opening
    tag or the end, first occurrence, any case; `<ans1>` counts as `<ans_1>` where the study allows it."""
    def pat(t: str) -> str:
        base, digit = _split_tag(t)
        return f"{re.escape(base)}_?{digit}" if underscore_optional and digit else re.escape(t)

    stops = f"</{pat(tag)}>" + (f"|<{pat(next_tag)}>" if next_tag else "")
    m = re.search(f"<{pat(tag)}>(.*?)(?=(?:{stops}|$))", output, flags=re.IGNORECASE | re.DOTALL)
    return m.group(1).strip() if m else None


def closed_tag(output: str, tag: str) -> str | None:
    """First `<tag>...</tag>` (any case), stripped; None when there is none."""
    m = re.search(f"<{re.escape(tag)}>(.*?)</{re.escape(tag)}>", output, flags=re.IGNORECASE | re.DOTALL)
    return m.group(1).strip() if m else None


# ---------------------------------------------------------------------------------------------
# answers

_NUM = r"-?\d+(?:\.\d+)?"


def math_answer(output: str, tag: str) -> str | None:
    """extract_math_answer: last number in the tag (or the tag's text), else after 'answer is'/'is',
    else the last number, else the literal 'PARSING_ERROR'."""
    if not output:
        return None
    text = output.strip()
    m = re.search(f"<{re.escape(tag)}>(.*?)</{re.escape(tag)}>", text, flags=re.IGNORECASE | re.DOTALL)
    if m:
        numbers = re.findall(_NUM, m.group(1))
        return numbers[-1] if numbers else m.group(1).strip()
    after = re.findall(rf"(?:answer is|is)[:\s]*({_NUM})", text, flags=re.IGNORECASE)
    if after:
        return after[-1]
    numbers = re.findall(_NUM, text)
    return numbers[-1] if numbers else "PARSING_ERROR"


def dual_math_answer(output: str, tag: str, next_tag: str | None) -> str | None:
    """extract_dual_math_answers: the last '-?\\d+\\.?\\d*' inside `<ans_?k>` (closing tag optional)."""
    if not isinstance(output, str):
        return None
    content = open_tag(output.strip(), tag, next_tag)
    if content is None:
        return None
    numbers = re.findall(r"-?\d+\.?\d*", content)
    return numbers[-1] if numbers else None


def math_match(candidate: str | None, gold: str) -> bool:
    return candidate is not None and candidate.strip() == gold.strip()


def qa_match(candidate: str | None, aliases: Sequence[str]) -> bool:
    if candidate is None:
        return False
    c = qa_normalize(candidate)
    return any(c == qa_normalize(a) for a in aliases)


_ORDINAL = {"1": 1, "2": 2, "1st": 1, "2nd": 2, "one": 1, "two": 2, "first": 1, "second": 2}


def content_to_index(content: str) -> int | None:
    c = content.strip().lower().rstrip(".")
    c = re.sub(r"^(the\s+)?(segment\s*)?", "", c)
    # a trailing 'segment' or 'problem' is dropped ('first segment'); a trailing 'one' is kept
    c = re.sub(r"\s*(segment|one|problem)$", lambda m: m.group(0) if m.group(1) == "one" else "", c).strip()
    return _ORDINAL.get(c)


def strict_choice(output: str, tag: str) -> int | None:
    found = re.findall(f"<{re.escape(tag)}>(.*?)</{re.escape(tag)}>", output, flags=re.IGNORECASE | re.DOTALL)
    if len(found) != 1 or not found[0].strip():
        return None
    return content_to_index(found[0])


_CHOICE_PATTERNS: tuple[tuple[str, Callable[[re.Match], int]], ...] = (
    (r"\bsegment\s*(?:number\s*)?([12])\b", lambda m: int(m.group(1))),
    (r"\b(first|second)\s+segment\b", lambda m: _ORDINAL[m.group(1)]),
    (r"\bthe\s+(first|second)\s+one\b", lambda m: _ORDINAL[m.group(1)]),
    (r"\b(?:answer|ans|index)\s*(?:is|:)?\s*([12])\b", lambda m: int(m.group(1))),
    (r"\bit\s+is\s+(?:segment\s*)?([12])\b", lambda m: int(m.group(1))),
    (r"\bthe\s+(first|second)\b", lambda m: _ORDINAL[m.group(1)]),
    (r"(?<![\d.])([12])(?![\d.])", lambda m: int(m.group(1))),
)


def selection_compliant(output: str, tag: str) -> bool:
    """grade_seg_idx.py's format compliance: exactly one non-empty closed pair (findall)."""
    found = re.findall(f"<{re.escape(tag)}>(.*?)</{re.escape(tag)}>", output, flags=re.IGNORECASE | re.DOTALL)
    return len(found) == 1 and bool(found[0].strip())


def lenient_choice(output: str, tag: str) -> int | None:
    idx = strict_choice(output, tag)
    if idx is not None:
        return idx
    found = re.findall(f"<{re.escape(tag)}>(.*?)</{re.escape(tag)}>", output, flags=re.IGNORECASE | re.DOTALL)
    indices = [i for i in (content_to_index(c) for c in found) if i is not None]
    if indices:
        return indices[-1]
    text = re.sub(f"</?{re.escape(tag)}>", " ", output, flags=re.IGNORECASE).lower()
    for pattern, value in _CHOICE_PATTERNS:
        hits = [(m.start(), value(m)) for m in re.finditer(pattern, text)]
        if hits:
            return sorted(hits)[-1][1]
    return None


def signal_detection(target_first: Iterable[bool], chose: Iterable[int | None]) -> dict[str, Any]:
    """grade_seg_idx.py's decomposition: every answer counts; 'yes' = chose segment 1."""
    pairs = list(zip(target_first, chose))
    n1 = sum(1 for t, _ in pairs if t)
    n2 = len(pairs) - n1
    hits = sum(1 for t, c in pairs if t and c == 1)
    false_alarms = sum(1 for t, c in pairs if not t and c == 1)
    correct2 = sum(1 for t, c in pairs if not t and c == 2)
    out: dict[str, Any] = {"n": len(pairs), "n_valid": sum(1 for _, c in pairs if c in (1, 2))}
    out["p_choose_first"] = (hits + false_alarms) / len(pairs) if pairs else None
    out["balanced_accuracy"] = (hits / n1 + correct2 / n2) / 2 if n1 and n2 else None
    if n1 and n2:
        z = NormalDist().inv_cdf
        h, f = (hits + 0.5) / (n1 + 1), (false_alarms + 0.5) / (n2 + 1)
        out.update(hit_rate=h, false_alarm_rate=f, d_prime=z(h) - z(f), criterion_c=-0.5 * (z(h) + z(f)))
    else:
        out.update(hit_rate=None, false_alarm_rate=None, d_prime=None, criterion_c=None)
    return out


# ---------------------------------------------------------------------------------------------
# transcription

def word_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """Errors and reference words after Whisper normalisation (jiwer; an empty hypothesis is all deletions)."""
    jiwer = jiwer_module()
    ref, hyp = whisper_normalize(reference), whisper_normalize(hypothesis or "")
    n_ref = len(ref.split())
    if not n_ref:
        return 0, 0
    if not hyp.strip():
        return n_ref, n_ref
    out = jiwer.process_words(ref, hyp)
    return out.substitutions + out.deletions + out.insertions, n_ref


def asr_class(target: str, distractor: str, both: str, hypothesis: str) -> str | None:
    """asr_wer_eval.py's conditional classes: correct / distractor / both / neither (None: not classed)."""
    jiwer = jiwer_module()
    t, d, b = whisper_normalize(target), whisper_normalize(distractor), whisper_normalize(both)
    if not t or not d or not b:
        return None
    hyp = whisper_normalize(hypothesis or "") or " "  # the study's guard for an empty hypothesis
    wt, wd, wb = jiwer.wer(t, hyp), jiwer.wer(d, hyp), jiwer.wer(b, hyp)
    low = min(wt, wd, wb)
    if low > ASR_OTHER_THRESHOLD:
        return "neither"
    if low == wb and wb < wt:
        return "both"
    if low == wd and wd < wt:
        return "distractor"
    return "correct"


def asr_transcript(output: str, tag: str) -> str:
    """extract_asr_result: the first closed tag, else the whole output."""
    text = output.strip()
    found = closed_tag(text, tag)
    return found if found is not None else text


Extract = Optional[Callable[[Optional[int], str, Optional[Sequence[str]]], Optional[str]]]
