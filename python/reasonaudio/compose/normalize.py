"""English text normalisation for WER and answer matching, in the spirit of Whisper's normaliser.

Steps (in order): lowercase; drop bracketed asides ([noise], (laughs)); expand common contractions;
American spelling for a short list of British words; hyphens and slashes become spaces; other
punctuation is removed (a decimal point between digits is kept); filler words (um, uh, hmm) are
dropped; optionally number words become digits ("twenty one" -> "21", "one hundred and five" ->
"105"); whitespace is collapsed. Converting numbers is on by default because a TTS reads "12" and a
model may write "twelve"; pass numbers=False to compare number words literally.
"""

from __future__ import annotations

import re

_CONTRACTIONS = (
    (r"\bwon't\b", "will not"),
    (r"\bcan't\b", "can not"),
    (r"\bcannot\b", "can not"),
    (r"n't\b", " not"),
    (r"'re\b", " are"),
    (r"'m\b", " am"),
    (r"'ll\b", " will"),
    (r"'ve\b", " have"),
    (r"\blet's\b", "let us"),
)
_BRITISH = {
    "colour": "color", "colours": "colors", "harbour": "harbor", "harbours": "harbors",
    "neighbour": "neighbor", "neighbours": "neighbors", "practised": "practiced",
    "practise": "practice", "centre": "center", "metre": "meter", "metres": "meters",
    "favourite": "favorite", "grey": "gray", "theatre": "theater", "organise": "organize",
}
_FILLERS = {"um", "uh", "hmm", "mm", "er", "ah", "uhm", "erm"}

_UNITS = {
    "zero": 0, "oh": None, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
         "eighty": 80, "ninety": 90}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}


def _words_to_digits(tokens: list[str]) -> list[str]:
    """Replace maximal runs of number words by their value; 'and' only inside a run after 'hundred'."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if (tok in _UNITS and _UNITS[tok] is not None) or tok in _TENS:
            total, current, j = 0, 0, i
            last = None
            while j < len(tokens):
                t = tokens[j]
                if t in _UNITS and _UNITS[t] is not None:
                    if last in ("unit", "teen"):
                        break  # "one two" is two numbers, not twelve
                    current += _UNITS[t]
                    last = "unit" if _UNITS[t] < 10 else "teen"
                elif t in _TENS:
                    if last in ("unit", "teen", "tens"):
                        break
                    current += _TENS[t]
                    last = "tens"
                elif t in _SCALES and last is not None and last != "scale":
                    scale = _SCALES[t]
                    if scale == 100:
                        current *= 100
                    else:
                        total += current * scale
                        current = 0
                    last = "scale"
                elif t == "and" and last == "scale" and j + 1 < len(tokens) and (
                    tokens[j + 1] in _TENS or (tokens[j + 1] in _UNITS and _UNITS[tokens[j + 1]] is not None)
                ):
                    last = "and"
                else:
                    break
                j += 1
            out.append(str(total + current))
            i = j
        else:
            out.append(tok)
            i += 1
    return out


def normalize_text(text: str, numbers: bool = True) -> str:
    s = text.lower()
    s = re.sub(r"\[[^\]]*\]|\([^)]*\)", " ", s)
    s = s.replace("\u2019", "'")
    for pattern, repl in _CONTRACTIONS:
        s = re.sub(pattern, repl, s)
    s = re.sub(r"'s\b", "s", s)
    s = re.sub(r"(?<=\d),(?=\d{3}\b)", "", s)  # 1,000 -> 1000
    s = re.sub(r"[-/]", " ", s)
    s = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", s)
    s = re.sub(r"[^\w\s.]", " ", s)
    s = s.replace("_", " ")
    tokens = [_BRITISH.get(t, t) for t in s.split() if t not in _FILLERS]
    if numbers:
        tokens = _words_to_digits(tokens)
    return " ".join(tokens)


def normalize_answer(text: str) -> str:
    """Normalised text without leading articles, for alias matching of short answers."""
    s = normalize_text(text)
    return re.sub(r"^(the|a|an) ", "", s)
