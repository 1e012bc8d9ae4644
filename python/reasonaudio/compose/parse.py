"""Reading model outputs: a strict tag parser and a lenient rule-based parser.

Strict: the requested tag must appear exactly once, opened and closed exactly as asked
(`<ans>...</ans>`); its content is taken as the answer and compared exactly after normalisation
(a number must be the whole content; a choice must be '1' or '2'; a label must equal an option).
Anything else is a miss. This measures the model under its output contract.

Lenient: tags are found case-insensitively, with spaces inside the brackets, `<ans1>` / `<ans 1>`
for `<ans_1>`, with a missing closing tag, and the last occurrence wins (the final answer after
reasoning); when a tag is absent the whole output is searched, split at markers such as
'Segment 1:' where two answers are needed. Then: a choice is the first
'1/2/one/two/first/second'; a label is the first option mentioned (word boundaries, so 'male' does
not match inside 'female'); a number is the last number (number words count, a minus sign is kept;
digits in markup such as `<ans1>` and in segment references such as 'from segment 2' are not
numbers); a factual answer is correct if an accepted alias occurs as whole words; a transcript is
the text with a leading 'Transcript:'-style preface removed. The gap between the two parsers'
scores is the part of a score that depends on format compliance rather than content.

This is the `robust` scoring mode; the study's own rules are in study.py.
"""

from __future__ import annotations

import re
from typing import Callable, Optional, Sequence

from reasonaudio.compose.normalize import normalize_answer, normalize_text

# A user-supplied judge: (raw output, what to extract, options or None) -> the extracted answer text.
Judge = Callable[[str, str, Optional[Sequence[str]]], Optional[str]]

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
# Markup (any <tag>, closing or not) and references to a segment by number are not answers.
_MARKUP = re.compile(r"<\s*/?\s*[A-Za-z][\w\s]*>")
_SEGMENT_REF = re.compile(r"\b(?:segment|clip|part|utterance|speaker|recording|audio)s?\s*(?:number\s*|no\s*|#\s*)?"
                          r"(?:\d+|one|two)\b|\b(?:first|second|1st|2nd)\s+(?:segment|clip|part|utterance|one)\b",
                          re.IGNORECASE)
_CHOICE = re.compile(r"\b(1|2|one|two|first|second)\b", re.IGNORECASE)
_CHOICE_VALUE = {"1": 1, "one": 1, "first": 1, "2": 2, "two": 2, "second": 2}
_MARKER = re.compile(r"(?:segment|clip|part|speaker|utterance|audio)\s*(?:#\s*)?(1|2|one|two)\b\s*[:\-.)]?"
                     r"|\b(first|second)\s+(?:segment|clip|part|utterance)\b\s*[:\-.)]?"
                     r"|^\s*(1|2)\s*[.):]", re.IGNORECASE | re.MULTILINE)


def _tag_name(tag: str) -> str:
    """Regex for a tag name; a trailing index may follow with '_', a space or nothing (ans_1, ans1, ans 1)."""
    m = re.fullmatch(r"(.*?)_(\d+)", tag)
    return rf"{re.escape(m.group(1))}[_\s]?{m.group(2)}" if m else re.escape(tag)


def strict_tag(output: str, tag: str) -> str | None:
    found = re.findall(rf"<{re.escape(tag)}>(.*?)</{re.escape(tag)}>", output, flags=re.DOTALL)
    if len(found) != 1:
        return None
    return found[0].strip()


def lenient_tag(output: str, tag: str) -> str | None:
    name = _tag_name(tag)
    opened = list(re.finditer(rf"<\s*{name}\s*>", output, flags=re.IGNORECASE))
    if not opened:
        return None
    start = opened[-1].end()
    close = re.compile(rf"<\s*/\s*{name}\s*>", re.IGNORECASE).search(output, start)
    if close:
        return output[start:close.start()].strip()
    nxt = output.find("<", start)
    return output[start: nxt if nxt >= 0 else len(output)].strip()


def split_segments(output: str) -> tuple[str, str] | None:
    """The text after 'Segment 1' and after 'Segment 2' style markers, when both are present."""
    spans: dict[int, tuple[int, int]] = {}
    for m in _MARKER.finditer(output):
        word = next(g for g in m.groups() if g)
        k = _CHOICE_VALUE[word.lower()]
        if k not in spans:
            spans[k] = (m.start(), m.end())
    if 1 not in spans or 2 not in spans:
        lines = [ln for ln in output.splitlines() if ln.strip()]
        return (lines[0], lines[1]) if len(lines) == 2 else None
    (s1, e1), (s2, e2) = spans[1], spans[2]
    if s1 < s2:
        return output[e1:s2], output[e2:]
    return output[e1:], output[e2:s1]


def strict_choice(content: str | None) -> int | None:
    return int(content) if content in ("1", "2") else None


def lenient_choice(text: str | None) -> int | None:
    if not text:
        return None
    m = _CHOICE.search(text)
    return _CHOICE_VALUE[m.group(1).lower()] if m else None


def _option_keys(option: str, phrase: str | None) -> list[str]:
    keys = {normalize_text(option)}
    if phrase:
        keys.add(normalize_text(phrase))
    return [k for k in keys if k]


def strict_option(content: str | None, options: Sequence[str], phrases: Sequence[str | None]) -> str | None:
    if content is None:
        return None
    norm = normalize_answer(content)
    for option, phrase in zip(options, phrases):
        if norm in {normalize_answer(k) for k in _option_keys(option, phrase)}:
            return option
    return None


def option_mentions(text: str | None, options: Sequence[str], phrases: Sequence[str | None]) -> list[str]:
    """Options in the order they are first mentioned in `text`."""
    if not text:
        return []
    norm = f" {normalize_text(text)} "
    found = []
    for option, phrase in zip(options, phrases):
        positions = [norm.find(f" {k} ") for k in _option_keys(option, phrase)]
        positions = [p for p in positions if p >= 0]
        if positions:
            found.append((min(positions), option))
    return [o for _, o in sorted(found)]


def lenient_option(text: str | None, options: Sequence[str], phrases: Sequence[str | None]) -> str | None:
    found = option_mentions(text, options, phrases)
    return found[0] if found else None


def strict_number(content: str | None) -> str | None:
    if content is None:
        return None
    norm = _number_text(content)
    return _canonical_number(norm) if _NUMBER.fullmatch(norm) else None


def _number_text(text: str) -> str:
    """normalize_text, keeping the sign of a negative number (the normaliser turns '-' into a space)."""
    marked = re.sub(r"(?<![\w.])-(?=\d)", " minussign ", text)
    return re.sub(r"\bminussign (?=\d)", "-", normalize_text(marked)).replace("minussign", " ").strip()


def _answer_text(text: str) -> str:
    """Normalised text without markup and segment references, where numbers are searched."""
    return _SEGMENT_REF.sub(" ", _number_text(_MARKUP.sub(" ", text)))


def lenient_number(text: str | None) -> str | None:
    if not text:
        return None
    found = _NUMBER.findall(_answer_text(text))
    return _canonical_number(found[-1]) if found else None


def _canonical_number(s: str) -> str:
    value = float(s)
    return str(int(value)) if value == int(value) else repr(value)


def strict_alias(content: str | None, aliases: Sequence[str]) -> bool:
    if content is None:
        return False
    return normalize_answer(content) in {normalize_answer(a) for a in aliases}


def alias_in(text: str | None, aliases: Sequence[str]) -> bool:
    if not text:
        return False
    hay = f" {normalize_text(text)} "
    return any(f" {normalize_text(a)} " in hay for a in aliases if normalize_text(a))


_PREFACE = re.compile(r"^[^:\n]{0,60}\btranscri\w*[^:\n]{0,30}:\s*", re.IGNORECASE)


def lenient_transcript(text: str | None) -> str:
    if not text:
        return ""
    text = _PREFACE.sub("", text.strip(), count=1)
    return text.strip().strip('"').strip()


def parse_numbers(text: str) -> list[str]:
    """Every number in `text` in order (number words included), canonicalised."""
    return [_canonical_number(s) for s in _NUMBER.findall(_answer_text(text))]
