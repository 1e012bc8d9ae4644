"""The template grammar read backwards: a query text -> the contract's logic, for one atom library.

Every rendered text is parsed back during generation (`reasonaudio.queries.generator`), so that the
text and the logic provably agree for the atom library at hand; `parse_query` is the same reading
for anyone holding an atoms table.
"""

from __future__ import annotations

import re
from typing import Sequence

import polars as pl

from reasonaudio.errors import UserError
from reasonaudio.queries.templates import NUMBER_WORDS, SHAPES, SLOT, TEMPLATES, bare, parse_seconds

_NUMBER_AT = re.compile(r"(?:\d+(?:\.\d+)?|" + "|".join(NUMBER_WORDS.values()) + r")")
_UNIT_AT = re.compile(r"seconds?")


class QueryParser:
    """Inverts the template grammar for one atom library: text -> logic.

    Each template is a sequence of glue words and slots; a text is walked through it exhaustively,
    trying every phrase of the library at every phrase slot, so phrases that contain template words
    ("a whistle with vibrato") still split correctly and every way of splitting the text into glue
    words and real phrases is a reading: a text with two readings is ambiguous.
    """

    def __init__(self, labels: Sequence[str], phrases: Sequence[str]):
        self.by_phrase: dict[str, str] = {}
        for label, phrase in zip(labels, phrases):
            for form in {phrase.lower(), bare(phrase).lower()}:
                self.by_phrase.setdefault(form, label)
        full = sorted({p.lower() for p in phrases}, key=len, reverse=True)
        bare_forms = sorted({bare(p).lower() for p in phrases}, key=len, reverse=True)
        self.alternatives = {False: full, True: bare_forms}  # longest first
        self.templates: list[tuple[str, list[tuple], list[str]]] = []
        for shape, templates in TEMPLATES.items():
            for template in templates:
                parts = self._parts(template)
                self.templates.append((shape, parts, self._screen(parts)))

    @staticmethod
    def _parts(template: str) -> list[tuple]:
        """('lit', text) | ('phrase', key, is_bare) | ('num', key) | ('unit',)."""
        parts: list[tuple] = []
        pos = 0
        for m in SLOT.finditer(template):
            if m.start() > pos:
                parts.append(("lit", template[pos : m.start()].lower()))
            if m.group(1):
                parts.append(("phrase", m.group(1), bool(m.group(2))))
            elif m.group(3):
                parts.append(("num", m.group(3)))
            else:
                parts.append(("unit",))
            pos = m.end()
        if pos < len(template):
            parts.append(("lit", template[pos:].lower()))
        return parts

    @staticmethod
    def _screen(parts: list[tuple]) -> list[str]:
        """The template's glue words, which a matching text holds in this order (a cheap filter)."""
        return [part[1].strip() for part in parts if part[0] == "lit" and part[1].strip()]

    @staticmethod
    def _may_match(glue: list[str], text: str) -> bool:
        pos = 0
        for word in glue:
            pos = text.find(word, pos)
            if pos < 0:
                return False
            pos += len(word)
        return True

    def _walk(self, parts: list[tuple], text: str, i: int, pos: int, values: dict, out: list[dict]) -> None:
        if i == len(parts):
            if text[pos:] in ("", "."):
                out.append(dict(values))
            return
        part = parts[i]
        if part[0] == "lit":
            if text.startswith(part[1], pos):
                self._walk(parts, text, i + 1, pos + len(part[1]), values, out)
        elif part[0] == "unit":
            m = _UNIT_AT.match(text, pos)
            if m:
                self._walk(parts, text, i + 1, m.end(), values, out)
        elif part[0] == "num":
            m = _NUMBER_AT.match(text, pos)
            if m:
                number = parse_seconds(m.group(0))
                if values.get(part[1], number) == number:
                    self._walk(parts, text, i + 1, m.end(), {**values, part[1]: number}, out)
        else:
            for phrase in self.alternatives[part[2]]:
                if text.startswith(phrase, pos):
                    label = self.by_phrase[phrase]
                    if values.get(part[1], label) == label:  # a repeated slot names one sound
                        self._walk(parts, text, i + 1, pos + len(phrase), {**values, part[1]: label}, out)

    def parse_all(self, text: str) -> list[dict]:
        """Every distinct logic the text can be read as (more than one means it is ambiguous)."""
        found: list[dict] = []
        text = " ".join(text.split())
        lowered = text.lower()
        for shape, parts, glue in self.templates:
            if not self._may_match(glue, lowered):
                continue
            readings: list[dict] = []
            self._walk(parts, lowered, 0, 0, {}, readings)
            for values in readings:
                logic = {"all": SHAPES[shape].build(values)}
                if logic not in found:
                    found.append(logic)
        return found

    def parse(self, text: str) -> dict:
        readings = self.parse_all(text)
        if not readings:
            raise UserError(f"query text does not match any template of this atom library: {text!r}")
        if len(readings) > 1:
            raise UserError(f"query text is ambiguous ({len(readings)} readings): {text!r}")
        return readings[0]


def parse_query(text: str, atoms: pl.DataFrame) -> dict:
    """Parse a templated query text back into the contract's logic dict for an atoms table."""
    return QueryParser(atoms["label"].to_list(), atoms["phrase"].to_list()).parse(text)
