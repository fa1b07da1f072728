"""Sentences of a text, questions among them, and how much of a text only asks.

Shared by the engine's neighbours above it: the offline responder and the knowledge reader split
answers into sentences (:mod:`smartctx.agents.text` re-exports these), and recall discounts what a
turn asks (:mod:`smartctx.retrieval.tiered`). Pure functions; :func:`asking_share` is cached per
text, since a recaller sees the same archived turns query after query.
"""

from __future__ import annotations

import re
from functools import lru_cache

BREAK = re.compile(r"\n\s*\n|\n\s*(?=#|[-*+]\s|\d+[.)]\s|>)")
"""Where a block ends: a blank line, or a line that starts a heading, a list item or a quote."""
SENTENCE = re.compile(r"(?<=[.!?。！？])\s+(?=[^\s])|(?<=[।])\s*")
MARKUP = re.compile(r"^\s*(?:#+|[-*+]|\d+[.)]|>)\s*|\*\*|__")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: paragraphs and list items first, then sentence punctuation.

    Markdown markers (headings, bullets, bold) are removed; wrapped lines are joined; headings
    are dropped (a heading is not an answer).
    """
    out: list[str] = []
    for block in BREAK.split(text):
        stripped = block.strip()
        if not stripped or stripped.startswith("#"):
            continue
        joined = " ".join(line.strip() for line in stripped.splitlines())
        for piece in SENTENCE.split(MARKUP.sub("", joined)):
            clean = MARKUP.sub("", piece).strip()
            if clean:
                out.append(clean)
    return out


def is_question(sentence: str) -> bool:
    """True for a question (ends with a question mark, in any script)."""
    return sentence.rstrip().endswith(("?", "？"))


@lru_cache(maxsize=8192)
def asking_share(text: str) -> float:
    """The share of ``text``'s characters that are in questions (0 for a statement, 1 for a
    text that only asks): "Wow! What got you into running?" is 0.87, "I'm planning a trip to the
    East Coast. How about you?" 0.27. A question tells what someone wants to know, not what is
    so; its answer, usually the next turn, is the evidence."""
    sentences = split_sentences(text)
    total = sum(len(s) for s in sentences)
    if not total:
        return 0.0
    return sum(len(s) for s in sentences if is_question(s)) / total


__all__ = ["asking_share", "is_question", "split_sentences"]
