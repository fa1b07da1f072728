"""Sentences of a text, questions among them, and how much of a text only asks.

Shared by the engine's neighbours above it: the offline responder and the knowledge reader split
answers into sentences (:mod:`smartctx.agents.text` re-exports these), and recall discounts what a
turn asks (:mod:`smartctx.retrieval.tiered`); a message that asks several questions is read as
each of them (:func:`asked_parts`). Pure functions; :func:`asking_share` and :func:`asked_parts`
are cached per text, since a recaller sees the same archived turns query after query.
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
def _questions(text: str) -> tuple[int, int, bool]:
    """Characters of ``text``'s sentences in questions, in all, and whether every sentence is
    one: each text is split once, however often a recall asks (an archive comes back turn after
    turn)."""
    sentences = split_sentences(text)
    flags = [is_question(s) for s in sentences]
    asked = sum(len(s) for s, flag in zip(sentences, flags, strict=True) if flag)
    return asked, sum(len(s) for s in sentences), all(flags)


def asking_share(text: str) -> float:
    """The share of ``text``'s characters that are in questions (0 for a statement, 1 for a
    text that only asks): "Wow! What got you into running?" is 0.87, "I'm planning a trip to the
    East Coast. How about you?" 0.27. A question tells what someone wants to know, not what is
    so; its answer, usually the next turn, is the evidence."""
    asked, total, _ = _questions(text)
    return asked / total if total else 0.0


@lru_cache(maxsize=4096)
def _asked(text: str) -> tuple[str, ...]:
    parts: list[str] = []
    pending: list[str] = []
    for sentence in split_sentences(text):
        pending.append(sentence)
        if is_question(sentence):
            parts.append(" ".join(pending))
            pending = []
    if len(parts) < 2:
        return (text,)
    if pending:  # "...? Thanks." closes the last question
        parts[-1] = " ".join([parts[-1], *pending])
    return tuple(parts)


def asked_parts(text: str) -> list[str]:
    """The questions of ``text`` when it asks two or more, each with the statements just before
    it ("Did you ask me anything before? My laptop broke. Who do I call?" gives "Did you ask me
    anything before?" and "My laptop broke. Who do I call?"; what follows the last question
    joins it), else ``[text]``. Each question of a message is one request: judged together, a
    question the evidence answers is drowned by the words of one it does not (cached per
    text)."""
    return list(_asked(text))


def only_asks(text: str) -> bool:
    """Whether every sentence of ``text`` is a question (true for a text with none): it tells
    nothing without its answer."""
    return _questions(text)[2]


__all__ = ["asked_parts", "asking_share", "is_question", "only_asks", "split_sentences"]
