"""How the offline responder scores evidence against a question.

Every candidate (a sentence or list item of the sourced context, see
:mod:`smartctx.agents.knowledge`) gets four signals:

- **lexical**: the rarity-weighted share of the question's analysed words found in the
  sentence (80%) and in its section (20%), the words any question is phrased with ("get",
  "need") weighing a quarter;
- **similarity**: the cosine of question and sentence under a multilingual embedder (USE), which
  carries a German, Spanish or Korean question to an English sentence;
- **answer type**: what the question asks for ("how long" a duration, "how long must it be" a
  size, "how much" an amount, "who" a contact, "where" a place, in English, German, Spanish and
  Korean), and whether the sentence holds such a thing ("14 characters", "USD 180", "floor 2",
  "hr@example.com");
- **entities**: the share of the question's names, acronyms and numbers ("London", "VPN",
  "1000") the sentence repeats.

:func:`score` combines them into one number; the responder answers when the best reaches its
calibrated threshold. Pure functions; the cost is linear in the number of candidates.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from smartctx.agents.knowledge import Sentence
from smartctx.retrieval.analysis import analyze

_NUM = r"\d[\d,.]*"
_TYPES: dict[str, re.Pattern[str]] = {
    "length": re.compile(
        rf"{_NUM}\s*(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|characters?|"
        r"working\s+days?|GB|MB|inch)\b|\b(?:at\s+least|up\s+to|within|after)\s+\d",
        re.IGNORECASE,
    ),
    "size": re.compile(
        rf"{_NUM}\s*(?:characters?|letters?|digits?|words?|pages?|inch(?:es)?|cm|mm|km|m|GB|MB|"
        r"KB|TB)\b",
        re.IGNORECASE,
    ),
    "amount": re.compile(
        rf"(?:USD|EUR|GBP|CHF|\$|€|£)\s*{_NUM}|{_NUM}\s*(?:USD|EUR|dollars?|euros?)|"
        rf"\b{_NUM}\s*(?:GB|%|per\s+cent)",
        re.IGNORECASE,
    ),
    "count": re.compile(r"\b\d+\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten)\b", re.I),
    "frequency": re.compile(
        rf"\bevery\b|\bper\s+(?:year|month|week|day|night)\b|\b{_NUM}\s*(?:years?|days?)\b", re.I
    ),
    "time": re.compile(
        r"\b\d{1,2}:\d{2}\b|\b(?:before|after|within|by)\s+\S+|\bnext\s+payroll\b|"
        r"\b(?:January|February|March|April|May|June|July|August|September|October|November|"
        r"December)\b|\b\d+\s+(?:working\s+)?days?\b",
        re.IGNORECASE,
    ),
    "place": re.compile(
        r"\bfloor\s+\d|\broom\s+\w+|\b(?:portal|app|desk|office|site|büro|oficina|bureau)\b"
        r"|\b[\w-]+\.example\.com\b"
        r"|`[^`]+`",
        re.IGNORECASE,
    ),
    "steps": re.compile(
        r"^(?:open|enter|go|sign|approve|click|choose|add|attach|submit|report|install|run|"
        r"check|switch|disconnect|accept|contact|call|write|tell|request|order|fill|confirm|"
        r"connect|select|use|send|upload|record|book)\b",
        re.IGNORECASE,
    ),
    "contact": re.compile(
        r"[\w.+-]+@[\w-]+\.\w+|\bextension\s+\d+|\+\d[\d\s]{6,}|\b(?:manager|head|team|HR|"
        r"helpdesk|finance|security)\b",
        re.IGNORECASE,
    ),
}
_ASKS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"\bhow\s+(?:long|far)\b|\bwie\s+lange?\b|\bcu[aá]nto\s+tiempo\b|얼마나\s*오래|"
                r"며칠|몇\s*(?:자|일|주|시간|분|개월|년)", re.I), ("length", "count")),
    (re.compile(r"\bhow\s+much\b|\blimit\b|\bwie\s+viel\b|\bcu[aá]nto\b|얼마", re.I),
     ("amount", "count")),
    (re.compile(r"\bhow\s+many\b|\bwie\s+viele\b|\bcu[aá]nt[oa]s\b|\bnumber\b|몇", re.I),
     ("count",)),
    (re.compile(r"\bhow\s+often\b|\bwie\s+oft\b|\bcada\s+cu[aá]nt", re.I), ("frequency",)),
    # "when" asks for a time where it opens the question ("When do I get paid?", "By when
    # ...?"); inside one it sets a condition ("the meal allowance when travelling")
    (re.compile(r"^\W*(?:(?:by|until|since)\s+)?when\b|\bwann\b|\bcu[aá]ndo\b|언제|\bdeadline\b",
                re.I), ("time",)),
    (re.compile(r"\bwhere\b|\bwo\b|\bd[oó]nde\b|\boù\b|어디|\baddress\b", re.I), ("place",)),
    (re.compile(r"\bhow\s+(?:do|can|should)\s+i\b|\bhow\s+to\b|\bwhat\s+(?:should|do)\s+i\s+do\b|"
                r"\bwhat\s+now\b|\bset\s+up\b|^wie\s+(?!viel|lange|oft)|\bc[oó]mo\b|어떻게", re.I),
     ("steps",)),
    (re.compile(r"\bwho\b|\bwer\b|\bqui[eé]n\b|누구|\bcontact\b|\bphone\b|\bemail\b|\btell\b",
                re.I), ("contact",)),
)  # fmt: skip
LIGHT_WORDS: frozenset[str] = frozenset(
    analyze(
        "get need want know make tell told say said mention find give take let like help way about "
        "thing able"
    )
)
"""Verbs and nouns a question is phrased with ("How many vacation days do I *get*?", "What do
I *need*...") that say nothing of its topic: they count a quarter of their weight, so a
sentence that happens to share one ("To *get* your expenses reimbursed...") does not outrank
one about the topic."""
LIGHT_WEIGHT = 0.25
_ENTITY = re.compile(r"(?<![\w.])(?:[A-Z][a-z]+|[A-Z]{2,}\w*|\d[\d,.]*\d|\d)(?![\w@])")


_SIZE = re.compile(
    # "How long must a new password be?", "Wie lang muss es sein?": a length, not a duration
    # ("How long does delivery take?", "Wie lange dauert es?")
    r"\bhow\s+long\b[^?!.]*\bbe\W*$|\bwhat\s+length\b|\bhow\s+(?:big|large|wide|tall)\b|"
    r"\bwie\s+lang\b(?!e)(?![^?!.]*\b(?:dauer|brauch|wart)\w*)|\bwie\s+(?:gro(?:ß|ss)|breit|hoch)\b|"
    r"\bqu[eé]\s+(?:longitud|tama[nñ]o)\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=256)
def answer_types(question: str) -> tuple[str, ...]:
    """What ``question`` asks for (empty for a yes/no or open question; a turn asks it of its
    question several times: kept for the last few)."""
    if _SIZE.search(question):
        return ("size",)
    out: list[str] = []
    for pattern, types in _ASKS:
        if pattern.search(question):
            out += [t for t in types if t not in out]
    return tuple(out)


def has_type(text: str, types: Sequence[str]) -> bool:
    """True when ``text`` holds one of ``types`` (see :func:`answer_types`)."""
    return any(_TYPES[t].search(text) for t in types)


def entities(text: str) -> set[str]:
    """Names, acronyms and numbers of ``text`` (its first word excepted when capitalised only
    because it starts the sentence), folded."""
    found: set[str] = set()
    for match in _ENTITY.finditer(text):
        word = match.group(0)
        if match.start() == 0 and word[:1].isupper() and not word.isupper():
            continue
        found.add(word.replace(",", "").casefold())
    return found


def _matches(terms: set[str], tokens: frozenset[str]) -> set[str]:
    """The ``terms`` found in ``tokens``, a plural or derived form counting ("taxi" meets
    "taxis", "reimburse" meets "reimbursement"): one a prefix of the other, 4+ letters shared."""
    out = terms & tokens
    out.update(t for t in terms - out if derived_in(t, tokens))
    return out


def derived_in(term: str, tokens: frozenset[str]) -> bool:
    """Whether one of ``tokens`` and ``term`` (4+ letters each) is a prefix of the other
    ("taxi" and "taxis"); an exact match is the caller's check."""
    if len(term) < 4:
        return False
    # a token that starts with the term, or a token of 4+ letters the term starts with
    return term in _prefixes(tokens) or not tokens.isdisjoint(_shorter(term))


@lru_cache(maxsize=16_384)
def _shorter(term: str) -> frozenset[str]:
    """The term's own prefixes of 4+ letters, itself left out (cached: questions repeat)."""
    return frozenset(term[:i] for i in range(4, len(term)))


@lru_cache(maxsize=8192)
def _prefixes(tokens: frozenset[str]) -> frozenset[str]:
    """Every prefix of 4+ letters of the tokens of 4+ letters (cached: the same sentences are
    scored turn after turn)."""
    return frozenset(t[:i] for t in tokens if len(t) >= 4 for i in range(4, len(t) + 1))


@dataclass(frozen=True, slots=True)
class Scored:
    """A candidate with its signals and combined ``score``."""

    sentence: Sentence
    score: float
    lexical: float
    similarity: float
    typed: bool
    entity: float
    shared: bool = False
    """Whether the sentence itself, not only its context (its list's lead-in, its section),
    holds a word of the question."""


def score(
    question: str,
    sentences: Sequence[Sentence],
    similarities: Sequence[float] | None = None,
    *,
    similarity_weight: float = 0.4,
    type_bonus: float = 0.15,
    entity_bonus: float = 0.15,
) -> list[Scored]:
    """Every sentence scored against ``question`` (in input order).

    ``score = (1 - w) * lexical + w * similarity + type_bonus * typed + entity_bonus * entity``
    with ``w = similarity_weight`` when ``similarities`` are given, else ``w = 0``.
    """
    terms = set(analyze(question))
    count = len(sentences)
    if count == 0:
        return []
    matched = [_matches(terms, s.tokens) for s in sentences]
    in_context = [_matches(terms, s.context_tokens) for s in sentences]
    weight = {
        # a light word weighs a flat quarter: phrasing no sentence repeats ("What did I *tell*
        # you *about* my desk?") must not count as a rare topic word the sentences lack
        t: LIGHT_WEIGHT
        if t in LIGHT_WORDS
        else 1.0 + float(np.log((count + 1) / (1 + sum(t in m for m in matched))))
        for t in terms
    }
    total = sum(weight.values()) or 1.0
    types = answer_types(question)
    names = entities(question)
    found = [entities(s.text) for s in sentences]
    # a name every other sentence repeats ("VPN" in the VPN guide) tells nothing apart
    names = {n for n in names if sum(n in f for f in found) * 3 <= count}
    w = similarity_weight if similarities is not None else 0.0
    sims = list(similarities) if similarities is not None else [0.0] * count
    out: list[Scored] = []
    for i, (sentence, sim) in enumerate(zip(sentences, sims, strict=True)):
        lexical = (
            0.8 * sum(weight[t] for t in matched[i]) / total
            + 0.2 * sum(weight[t] for t in in_context[i]) / total
        )
        typed = bool(types) and has_type(sentence.text, types)
        # a name tells apart sentences on the question's topic; it does not make one: a
        # sentence that shares nothing but the name gets no bonus for it ("Can I fly business
        # class to Tokyo?" is not answered by the hotel limits that list Tokyo)
        shared_names = names & found[i]
        on_topic = any(t not in shared_names for t in matched[i])
        entity = len(shared_names) / len(names) if names and on_topic else 0.0
        value = (1 - w) * lexical + w * sim + type_bonus * typed + entity_bonus * entity
        out.append(Scored(sentence, value, lexical, sim, typed, entity, bool(matched[i])))
    return out
