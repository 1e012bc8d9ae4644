"""Downstream content of a segment: sentences to transcribe, spoken arithmetic, factual questions.

Every list here was written for this project. A segment's content is one `Item`: the text that is
spoken, the accepted answers (for transcription the reference is the text itself) and a few tags.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from reasonaudio.io.benchmark import iter_jsonl
from reasonaudio.errors import UserError

CONTENT_TASKS = ("asr", "math", "facts")


@dataclass(frozen=True)
class Item:
    text: str
    answers: tuple[str, ...]
    level: int | None = None
    source: str = "builtin"
    extra: dict = field(default_factory=dict, compare=False, hash=False)


# Short declarative sentences for transcription; plain words so that a TTS reads them unambiguously.
SENTENCES: tuple[str, ...] = (
    "The kettle started to whistle just as the guests arrived.",
    "Please leave the spare keys under the blue flower pot.",
    "Our train was delayed by twenty minutes this morning.",
    "She painted the fence a bright shade of green.",
    "The library closes early on the first Friday of each month.",
    "A small boat drifted slowly toward the harbour.",
    "He forgot his umbrella on the bus again.",
    "The children built a tall tower out of wooden blocks.",
    "Fresh bread smells wonderful when it comes out of the oven.",
    "We watched the sun set behind the distant hills.",
    "The meeting will start after everyone has found a seat.",
    "My neighbour grows tomatoes and peppers in her garden.",
    "The old clock in the hall stopped at midnight.",
    "Turn left at the bakery and walk past the post office.",
    "The museum opened a new room for ancient maps.",
    "A gentle breeze moved the curtains in the kitchen.",
    "They packed sandwiches and apples for the long hike.",
    "The teacher asked the class to read the second chapter.",
    "Thick fog covered the valley until late afternoon.",
    "His bicycle needs new brakes before the weekend trip.",
    "The cat slept all day on the warm window sill.",
    "We need more paper for the printer in the office.",
    "The band played an extra song at the end of the concert.",
    "She wrote a long letter to her grandmother in Spain.",
    "Every spring the river floods the lower fields.",
    "The chef added a pinch of salt to the soup.",
    "Please switch off the lights when you leave the room.",
    "The football match was cancelled because of the storm.",
    "A flock of geese flew over the lake at dawn.",
    "The shop on the corner sells maps and old postcards.",
    "He practised the piano for an hour every evening.",
    "The bridge was painted red to match the city colours.",
    "Our flight lands at nine in the evening.",
    "The farmer fixed the gate before the cows got out.",
    "She keeps her notes in a small yellow notebook.",
    "The hotel room had a view of the mountains.",
    "They planted three oak trees near the school.",
    "The letter arrived a week after it was sent.",
    "He poured a glass of cold water for his friend.",
    "The street market is busy on Saturday mornings.",
    "A loud knock on the door woke the whole family.",
    "The recipe calls for two eggs and a cup of milk.",
    "We followed the narrow path along the cliff.",
    "The scientist checked the results a second time.",
    "Bright lanterns hung from every tree in the park.",
    "The printer jammed halfway through the report.",
    "My brother learned to swim when he was six.",
    "The ferry leaves the island twice a day.",
    "She found an old photograph inside the book.",
    "The garden looks lovely after the summer rain.",
)

# Factual questions with accepted answer aliases (compared after normalisation).
FACTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("What is the capital city of France?", ("Paris",)),
    ("What is the capital city of Japan?", ("Tokyo",)),
    ("What is the capital city of Italy?", ("Rome",)),
    ("What is the capital city of Canada?", ("Ottawa",)),
    ("What is the capital city of Egypt?", ("Cairo",)),
    ("What is the capital city of Australia?", ("Canberra",)),
    ("Which planet is closest to the Sun?", ("Mercury",)),
    ("Which planet is known as the red planet?", ("Mars",)),
    ("What is the largest planet in our solar system?", ("Jupiter",)),
    ("What is the largest ocean on Earth?", ("Pacific", "Pacific Ocean", "the Pacific")),
    ("Which gas do plants take in from the air to make food?", ("carbon dioxide", "CO2")),
    ("What is the chemical symbol for gold?", ("Au",)),
    ("What is the freezing point of water in degrees Celsius?", ("0", "zero", "0 degrees")),
    ("How many legs does a spider have?", ("8", "eight")),
    ("How many days are there in a leap year?", ("366",)),
    ("How many continents are there?", ("7", "seven")),
    ("Who wrote the play Romeo and Juliet?", ("Shakespeare", "William Shakespeare")),
    ("Who painted the Mona Lisa?", ("Leonardo da Vinci", "da Vinci", "Leonardo")),
    ("What is the hardest natural substance?", ("diamond", "diamonds")),
    ("Which animal is known as the king of the jungle?", ("lion", "the lion")),
    ("What is the tallest mountain on Earth?", ("Mount Everest", "Everest")),
    ("What is the longest river in Africa?", ("Nile", "the Nile", "Nile River")),
    ("In which country are the pyramids of Giza?", ("Egypt",)),
    ("What language is mainly spoken in Brazil?", ("Portuguese",)),
    ("What is the main ingredient of guacamole?", ("avocado", "avocados")),
    ("How many sides does a hexagon have?", ("6", "six")),
    ("What colour do you get by mixing blue and yellow?", ("green",)),
    ("What is the boiling point of water in degrees Celsius at sea level?", ("100", "one hundred")),
    ("Which organ pumps blood through the human body?", ("heart", "the heart")),
    ("What is the largest mammal on Earth?", ("blue whale", "the blue whale")),
    ("Which metal is liquid at room temperature?", ("mercury",)),
    ("What is the currency of Japan?", ("yen", "Japanese yen")),
    ("How many minutes are there in one hour?", ("60", "sixty")),
    ("Which instrument has black and white keys?", ("piano", "the piano")),
    ("What is the smallest prime number?", ("2", "two")),
    ("Which bird is a symbol of peace?", ("dove", "the dove", "white dove")),
    ("What do bees make?", ("honey",)),
    ("Which season comes after winter?", ("spring",)),
    ("What is the opposite of north?", ("south",)),
    ("How many strings does a standard violin have?", ("4", "four")),
)

_NAMES = ("Tom", "Anna", "Lucas", "Maria", "Sam", "Nora", "Leo", "Emma")
_THINGS = ("apples", "books", "pencils", "stamps", "marbles", "cookies", "coins", "shells")


def math_item(rng: np.random.Generator, level: int) -> Item:
    """One spoken arithmetic question with an exact non-negative integer answer.

    Level 1: one operation on numbers up to 20; level 2: multiplication tables or a one-step word
    problem up to 100; level 3: two operations (the spoken order is the evaluation order).
    """
    if level == 1:
        a, b = (int(v) for v in rng.integers(1, 21, size=2))
        if rng.random() < 0.5:
            return Item(f"What is {a} plus {b}?", (str(a + b),), level, "generated")
        a, b = max(a, b), min(a, b)
        return Item(f"What is {a} minus {b}?", (str(a - b),), level, "generated")
    if level == 2:
        if rng.random() < 0.5:
            a, b = (int(v) for v in rng.integers(2, 13, size=2))
            return Item(f"What is {a} times {b}?", (str(a * b),), level, "generated")
        name = _NAMES[int(rng.integers(len(_NAMES)))]
        thing = _THINGS[int(rng.integers(len(_THINGS)))]
        have = int(rng.integers(20, 100))
        give = int(rng.integers(1, have))
        return Item(
            f"{name} has {have} {thing} and gives away {give}. How many {thing} are left?",
            (str(have - give),), level, "generated",
        )
    if level == 3:
        a, b = (int(v) for v in rng.integers(2, 13, size=2))
        c = int(rng.integers(1, 30))
        if rng.random() < 0.5:
            return Item(f"What is {a} times {b}, plus {c}?", (str(a * b + c),), level, "generated")
        c = min(c, a * b)
        return Item(f"What is {a} times {b}, minus {c}?", (str(a * b - c),), level, "generated")
    raise UserError(f"math level must be 1, 2 or 3, got {level}")


def builtin_facts() -> list[Item]:
    return [Item(q, a, None, "builtin") for q, a in FACTS]


def load_facts(path: str | Path) -> list[Item]:
    """Read user factual questions from JSONL ({"question", "answers": [...]}) or CSV
    (columns question, answers with aliases separated by '|')."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"facts file {path} does not exist")
    items: list[Item] = []
    if path.suffix.lower() in (".jsonl", ".json"):
        for lineno, row in iter_jsonl(path):
            items.append(_fact_row(row, f"{path}:{lineno}"))
    elif path.suffix.lower() in (".csv", ".tsv"):
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh, delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
            for lineno, row in enumerate(reader, 2):
                answers = row.get("answers")
                if answers is not None:
                    row = dict(row, answers=[a for a in answers.split("|")])
                items.append(_fact_row(row, f"{path}:{lineno}"))
    else:
        raise UserError(f"facts file {path}: expected a .jsonl or .csv file")
    if not items:
        raise UserError(f"facts file {path} holds no questions")
    return items


def _fact_row(row: object, where: str) -> Item:
    if not isinstance(row, dict):
        raise UserError(f"{where}: expected an object with 'question' and 'answers'")
    question = row.get("question")
    answers = row.get("answers", row.get("answer"))
    if isinstance(answers, str):
        answers = [answers]
    if not isinstance(question, str) or not question.strip():
        raise UserError(f"{where}: 'question' must be a non-empty string")
    if not isinstance(answers, list) or not answers or not all(isinstance(a, str) and a.strip() for a in answers):
        raise UserError(f"{where}: 'answers' must be a non-empty list of non-empty strings")
    return Item(question.strip(), tuple(a.strip() for a in answers), None, "user")
