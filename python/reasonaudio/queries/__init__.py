"""Queries: the template grammar (`templates`), its parser (`parser`) and the generator that draws
queries from real clips (`generator`).

A query is a `logic` object (contract §2) plus an English `text` rendered from one of several
phrasings of its shape. The logic is the truth; the wording never changes it, and every rendered text
is parsed back during generation so that the text and the logic provably agree for the atom library
at hand.
"""

from reasonaudio.queries.generator import ClipView, ClipViews, QueryCapacityError, QueryGenerator, QuerySpec
from reasonaudio.queries.parser import QueryParser, parse_query
from reasonaudio.queries.templates import SHAPES, TEMPLATES, Shape, bare, render

__all__ = [
    "SHAPES",
    "TEMPLATES",
    "ClipView",
    "ClipViews",
    "QueryCapacityError",
    "QueryGenerator",
    "QueryParser",
    "QuerySpec",
    "Shape",
    "bare",
    "parse_query",
    "render",
]
