"""The question set of ``smartctx bench answers`` and how a reply is judged.

The questions (``smartctx/data/bench/answers.jsonl``) are asked as users ask them about the
shipped helpdesk knowledge base: each names the facts a correct answer must contain (``facts``,
every entry required, ``|`` separating acceptable alternatives), the knowledge chunks that hold
them (``sources``), its language and its split (``dev`` for calibration, ``test`` held out). A
question with no facts has no answer in the knowledge base: the right reply abstains.

Judging is plain string matching after NFKC folding, so anyone can re-check a figure by hand.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from importlib import resources

ABSTENTION_MARKERS = (
    "i don't have that information",
    "i do not have that information",
)
"""Lower-cased phrases that mark a reply as an abstention (the offline responder's wording)."""

_JUNK = re.compile(
    r"current request \(|planner|route_family|\"[a-z_]+\"\s*:|\{\s*\"|memory_snapshot|"
    r"earlier turn\. user:|\[recalled from:|\[tool:|kb\.search\(",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Question:
    """One benchmark question (see the module docstring)."""

    id: str
    split: str
    lang: str
    question: str
    facts: tuple[str, ...]
    sources: tuple[str, ...]

    @property
    def answerable(self) -> bool:
        return bool(self.facts)


def load_questions(split: str | None = None) -> list[Question]:
    """The shipped questions, in file order; ``split`` keeps ``dev`` or ``test`` only."""
    text = resources.files("smartctx.data").joinpath("bench/answers.jsonl").read_text("utf-8")
    out: list[Question] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        question = Question(
            id=raw["id"],
            split=raw["split"],
            lang=raw["lang"],
            question=raw["question"],
            facts=tuple(raw["facts"]),
            sources=tuple(raw["sources"]),
        )
        if split is None or question.split == split:
            out.append(question)
    return out


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def is_abstention(reply: str) -> bool:
    """True when ``reply`` says it has no answer."""
    folded = _fold(reply).replace("’", "'")
    return any(marker in folded for marker in ABSTENTION_MARKERS)


def is_junk(reply: str) -> bool:
    """True when ``reply`` quotes prompt scaffolding, tool logs or raw JSON."""
    return _JUNK.search(reply) is not None


def is_correct(question: Question, reply: str) -> bool:
    """An answerable question: every fact present (any alternative). Unanswerable: abstains."""
    if not question.answerable:
        return is_abstention(reply)
    if is_abstention(reply) or is_junk(reply):
        return False
    folded = _fold(reply)
    return all(any(_fold(alt) in folded for alt in fact.split("|")) for fact in question.facts)


def evidence_present(question: Question, prompt_text: str) -> bool:
    """True when one of the question's sources is cited in ``prompt_text`` (always true for an
    unanswerable question)."""
    if not question.sources:
        return True
    return any(source in prompt_text for source in question.sources)
