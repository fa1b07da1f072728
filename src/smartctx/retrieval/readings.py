"""A question read in the words of its evidence.

Two kinds of words in a question say nothing of which passage answers it when the evidence
(a knowledge base, the sentences of a prompt) never uses them, yet they pull the question's
vector away from the answer and, counted as words no sentence holds, lower every sentence's
share of the question's words:

- **a place the evidence never names.** "What is the hotel limit in Singapore?" asks for a rule
  the helpdesk corpus states in general ("Hotels: up to USD 180 per night (USD 250 in London, New
  York, Tokyo and Zurich)"). The corpus never names Singapore, so the name carries no evidence
  either way, but it pulls the question away from the rule (USE, the expense chunk: 0.232 for
  "What is the hotel limit?", 0.185 with "in Singapore", under the knowledge base's 0.2). A
  rule that holds everywhere holds in Singapore: the question is read as "What is the hotel
  limit?". Only places are left out: a name (a word, or a run of words, written with a capital)
  right after an English preposition of place ("in Singapore", "to New York"), because a place
  is where a rule applies, not what it is about; other names often are the topic ("How do I
  install Zoom?" is not asking for the VPN client's installation). A name that a noun follows
  ("to Singapore airport", "the Berlin office") names that thing, not where a rule applies: it
  is read as written. And only when what is left still holds a word the evidence knows, written
  in lower case ("hotel", "limit"), so the question keeps a topic of its own; questions in other
  languages are read as written (a place may be spelt there as the evidence does not spell it:
  "à Londres" is London).
- **a Latin expression of business English the evidence never uses.** "What is the meal per
  diem?" asks for what the policy calls "a daily allowance"; a sentence encoder trained on
  general text does not bring the two together (USE: "per diem" is as close to "daily
  allowance", 0.30, as to "book", 0.32), so the question fell under the knowledge base's gate
  while "What is the meal daily allowance?" passes it. The few expressions of :data:`PLAIN`,
  each with one plain English meaning, are read in those words when the evidence does not hold
  the expression itself; a glossary of the domain's own synonyms is not attempted here.

A name the evidence never holds that is not such a place ("How do I install Zoom?", "What is
the Euro exchange rate?") is what the question is about: :func:`unknown_names` finds them, and
the responder abstains on an English question that asks about something its evidence never names.

What "the evidence knows" is the caller's (the knowledge base's vocabulary, the words of a
prompt's sentences), as analysed words (:func:`~smartctx.retrieval.analysis.analyze`). Pure
functions; the cost is a regular expression and the analysis of a few words.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from smartctx.retrieval.analysis import analyze

Knows = Callable[[str], bool]
"""Whether the evidence holds an analysed word."""

_NAME = r"[A-ZÀ-ÖØ-Þ][^\W\d_]+(?:[-'][^\W\d_]+)*"
_PLACE = re.compile(
    r"(?<![\w-])(?P<prep>(?i:in|into|to|from|at|near|around|across|outside|with|for))\s+"
    rf"(?P<name>{_NAME}(?:\s+{_NAME})*)(?![\w-])"
)
"""An English preposition of place, or of the company or the party something is done with or for,
and a name of two letters or more: "in Singapore", "to New York", "with Priya", "for Acme". An
all-capitals word is an acronym ("in USD"), not a place."""
_NEXT_WORD = re.compile(r"\s*(?P<word>[^\W\d_][\w'-]*)?")
AFTER_PLACE: frozenset[str] = frozenset({
    "via", "during", "until", "till", "while", "too", "also", "please", "again", "now", "soon",
    "instead", "only", "next", "last", "tonight", "today", "tomorrow", "yesterday", "before",
    "after", "since", "within", "without",
})  # fmt: skip
"""Words that may follow a place and end its phrase ("to Singapore next week", "in Paris too"),
beside the stop words ("in Paris at night") and the prepositions of place ("from London to
Paris"): the closed classes of adverbs and prepositions, not nouns ("Singapore airport")."""
_PREPOSITIONS = frozenset(
    {"in", "into", "to", "from", "at", "near", "around", "across", "outside", "with", "for"}
)
PLAIN: dict[str, str] = {
    "per diem": "daily allowance",
    "per annum": "per year",
    "per capita": "per person",
}
"""Latin expressions of business English and the plain words a policy says them in."""
_LATIN = re.compile(r"\b(" + "|".join(PLAIN) + r")\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_][\w'-]*")
_SENTENCE_START = re.compile(r"(?<=[.!?:;])\s+")
_APOSTROPHE = re.compile(r"['’]")
MIN_LETTERS = 3
"""A known word this short ("s" of "what's") does not make a topic."""


def unknown_places(text: str, knows: Knows) -> list[str]:
    """The places ``text`` names (see the module docstring) whose words the evidence does not
    all hold, in order: "London" is not one when the evidence names London, "New Delhi" is one
    when it holds "new" but not "delhi"."""
    out: list[str] = []
    for match in _PLACE.finditer(text):
        name = match.group("name")
        if any(word.isupper() for word in name.split()):
            continue  # "in USD", "to HR": an acronym
        if not _ends_phrase(text, match.end()):
            continue  # "to Singapore airport": the name says which airport
        tokens = analyze(name)
        if tokens and not all(knows(t) for t in tokens):
            out.append(name)
    return out


def _ends_phrase(text: str, end: int) -> bool:
    """Whether the name ending at ``end`` ends its phrase: nothing, punctuation, a stop word, a
    preposition of place or a word of :data:`AFTER_PLACE` follows it, not a noun it names."""
    word = _NEXT_WORD.match(text, end)
    following = word.group("word") if word is not None else None
    if following is None:
        return True
    folded = following.casefold()
    return not analyze(following) or folded in _PREPOSITIONS or folded in AFTER_PLACE


def unknown_names(text: str, knows: Knows) -> list[str]:
    """The names ``text`` (English) asks about that the evidence never holds, in order: words
    written with a capital inside a sentence (not its first word, not an acronym), each once,
    whose analysed words the evidence does not all hold. Read it first (:func:`general_reading`)
    so a place where a rule applies is not one of them."""
    out: list[str] = []
    for part in _SENTENCE_START.split(text):
        for word in _WORD.findall(part)[1:]:
            name = _APOSTROPHE.split(word)[0]  # "Berlin's" is Berlin; "I'm" is no name
            if len(name) < 2 or not name[0].isupper() or name.isupper() or name in out:
                continue
            tokens = analyze(name)
            if tokens and not all(knows(t) for t in tokens):
                out.append(name)
    return out


def _has_topic(text: str, knows: Knows) -> bool:
    """Whether ``text`` holds a known word of :data:`MIN_LETTERS` or more written in lower case."""
    return any(
        len(token) >= MIN_LETTERS and knows(token)
        for word in _WORD.findall(text)
        if word[0].islower()
        for token in analyze(word)
    )


def plain_words(text: str, knows: Knows) -> str:
    """``text`` with the expressions of :data:`PLAIN` the evidence does not hold said in plain
    words ("What is the meal per diem?" -> "What is the meal daily allowance?")."""

    def plain(match: re.Match[str]) -> str:
        said = match.group(0)
        return said if all(knows(t) for t in analyze(said)) else PLAIN[said.casefold()]

    return _LATIN.sub(plain, text)


def general_reading(text: str, knows: Knows) -> str | None:
    """``text`` read in the words of its evidence (see the module docstring): its Latin
    expressions in plain words (:func:`plain_words`), and without its unknown places, each with
    its preposition ("What is the hotel limit in Singapore?" -> "What is the hotel limit?") when
    what is left holds a known word written in lower case. ``None`` when nothing changes."""
    reading = plain_words(text, knows)
    places = set(unknown_places(reading, knows))
    if places:
        left = _PLACE.sub(lambda m: "" if m.group("name") in places else m.group(0), reading)
        left = re.sub(r"\s+([?!.,;:])", r"\1", " ".join(left.split())).lstrip(" ,;:")
        # the places stay when nothing the evidence knows would be left
        reading = left if _has_topic(left, knows) else reading
    return None if reading == text else reading


__all__ = [
    "AFTER_PLACE",
    "PLAIN",
    "Knows",
    "general_reading",
    "plain_words",
    "unknown_names",
    "unknown_places",
]
