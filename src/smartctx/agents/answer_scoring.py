"""How the offline responder scores evidence against a question.

Every candidate (a sentence or list item of the sourced context, see
:mod:`smartctx.agents.knowledge`) gets four signals:

- **lexical**: the rarity-weighted share of the question's analysed words found in the
  sentence (80%) and in its section (20%), the words any question is phrased with ("get",
  "need") weighing a quarter, and those of a question in another language that no sentence
  holds ("reembolso") as little as a word every sentence holds;
- **similarity**: the cosine of question and sentence under a multilingual embedder (USE), which
  carries a German, Spanish or Korean question to an English sentence;
- **answer type**: what the question asks for ("how long" a duration, "how long must it be" a
  size, "how much" an amount, "who" a contact, a phone a number to call, "where" a place, in
  English, German, Spanish and Korean), and whether the sentence holds such a thing ("14
  characters", "USD 180", "floor 2", "hr@example.com", "extension 4357");
- **entities**: the share of the question's names, acronyms and numbers ("London", "VPN",
  "1000") the sentence repeats.

:func:`score` combines them into one number; the responder answers when the best reaches its
calibrated threshold. Pure functions; the cost is linear in the number of candidates.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
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
        r"\b\d{1,2}:\d{2}\b|\b(?:before|after|within)\s+\S+|\bnext\s+payroll\b|"
        # "by" names a time only before one ("by 31 March", "by Friday"; "approved by your
        # manager" names who)
        r"\bby\s+(?:\d|the\s+end\b|(?:next|this|tomorrow|today|tonight|noon|midnight|"
        r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b)|"
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
    "phone": re.compile(r"\+\d[\d\s]{6,}\d|\bextension\s+\d+|\bext\.\s*\d+", re.IGNORECASE),
    "contact": re.compile(
        r"[\w.+-]+@[\w-]+\.\w+|\bextension\s+\d+|\+\d[\d\s]{6,}|\b(?:manager|head|team|HR|"
        r"helpdesk|finance|security)\b",
        re.IGNORECASE,
    ),
}
_ASKS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"\bhow\s+(?:long|far)\b|\bwie\s+lange?\b|\bcu[aá]nto\s+tiempo\b|얼마나\s*오래|"
                r"며칠|몇\s*(?:자|일|주|시간|분|개월|년)", re.I), ("length", "count")),
    (re.compile(r"\bhow\s+much\b|\blimit\b|\bl[ií]mite\b|\bwie\s+viel\b|\bcu[aá]nto\b|얼마", re.I),
     ("amount", "count")),
    (re.compile(r"\bhow\s+many\b|\bwie\s+viele\b|\bcu[aá]nt[oa]s\b|\bnumber\b|몇", re.I),
     ("count",)),
    (re.compile(r"\bhow\s+often\b|\bwie\s+oft\b|\bcada\s+cu[aá]nt", re.I), ("frequency",)),
    # "when" asks for a time where it opens the question ("When do I get paid?", "By when
    # ...?"); inside one it sets a condition ("the meal allowance when travelling")
    (re.compile(r"^\W*(?:(?:and|also|so|but|then)\s+)?(?:(?:by|until|since)\s+)?when\b|\bwann\b"
                r"|\bcu[aá]ndo\b|언제|\bdeadline\b",
                re.I), ("time",)),
    # how long something takes is when it is done ("How long does reimbursement take?",
    # "Wie lange dauert die Erstattung?"), not how long one has to act
    (re.compile(r"\bhow\s+long\s+(?:does|do|did|will|would|can|could|should)\b[^?!.]*"
                r"\btak(?:e|es|ing)\b|\bwie\s+lange\s+dauer|\bcu[aá]nto\s+(?:tiempo\s+)?tarda",
                re.I), ("time",)),
    # "where", or "which city / what country ...": a place
    (re.compile(r"\bwhere\b|\bwo\b|\bd[oó]nde\b|\boù\b|어디|\baddress\b|"
                r"\b(?:which|what)\s+(?:city|town|country|location)\b", re.I), ("place",)),
    (re.compile(r"\bhow\s+(?:do|can|should)\s+i\b|\bhow\s+to\b|\bwhat\s+(?:should|do)\s+i\s+do\b|"
                r"\bwhat\s+now\b|\bset\s+up\b|^wie\s+(?!viel|lange|oft)|\bc[oó]mo\b|어떻게", re.I),
     ("steps",)),
    (re.compile(r"\bwho\b|\bwer\b|\bqui[eé]n\b|누구|\bcontact\b|\bemail\b|\btell\b", re.I),
     ("contact",)),
    # a phone number is a number to call, not any contact ("manager", "HR")
    (re.compile(r"\b(?:tele)?phone\b|\bcall\b|\btelefon\w*|\btel[eé]fono\b|전화", re.I),
     ("phone",)),
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
_HOW_MUCH = re.compile(r"\bhow\s+(long|many|much|far|often|soon)\b", re.IGNORECASE)


def light_words(question: str) -> frozenset[str]:
    """:data:`LIGHT_WORDS` and the word of ``question``'s "how long", "how many", "how much"
    ...: it asks for a value and names no topic ("How long does reimbursement take?" is not
    about "longer flights")."""
    asked = " ".join(m.group(1) for m in _HOW_MUCH.finditer(question))
    return LIGHT_WORDS | frozenset(analyze(asked)) if asked else LIGHT_WORDS


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
    question several times: kept for the last few). A question that names a sum asks for the
    sum it is weighed against, whatever else it asks: "Do I need a receipt for a 20 dollar
    lunch?" is answered by the rule that sets one ("every itemized receipt over USD 25")."""
    if _SIZE.search(question):
        return ("size",)
    out: list[str] = []
    for pattern, types in _ASKS:
        if pattern.search(question):
            out += [t for t in types if t not in out]
    if "amount" not in out and _TYPES["amount"].search(question):
        # a sum the question names ("a 20 dollar lunch", "a claim over 1000 dollars") is
        # weighed against the sum a rule sets ("every itemized receipt over USD 25")
        out.append("amount")
    return tuple(out)


def has_type(text: str, types: Sequence[str]) -> bool:
    """True when ``text`` holds one of ``types`` (see :func:`answer_types`)."""
    return any(_TYPES[t].search(text) for t in types)


TIMES = frozenset({"time"})
"""Answer types of a question that asks when something happens ("length" is left out: it is
also a size, "at least 14 characters and must not contain your name")."""
_CLAUSE_BREAK = re.compile(r"\s*;\s*")
_NEGATED = re.compile(r"\b(?:not|never|no)\b|n['’]t\b", re.IGNORECASE)
_LEADING_PHRASE = re.compile(r"^\W*(?:to|if|when|once|for|after|before)\b[^,;]*,\s*", re.I)
_PURPOSE = re.compile(r"^\W*(?:in\s+order\s+)?(to\b[^,;]*),\s*", re.I)


@lru_cache(maxsize=4096)
def _stated(text: str) -> tuple[str, str]:
    """What ``text`` says happens, for a question of when (:data:`TIMES`): its clauses (parted
    at semicolons) but those that deny ("claims older than 90 days are not paid"), together;
    and, of those, the ones that are no instruction to the reader ("To get your expenses
    reimbursed, submit a claim ... within 30 days" sets the reader's deadline, not when the
    money comes; a leading "To ...," or "If ..." phrase set apart). Cached: the same sentences
    are read turn after turn."""
    clauses = [c for c in _CLAUSE_BREAK.split(text) if c and not _NEGATED.search(c)]
    said = [c for c in clauses if not _TYPES["steps"].match(_LEADING_PHRASE.sub("", c))]
    return " ; ".join(clauses), " ; ".join(said)


def purposes(text: str) -> list[tuple[str, str]]:
    """The instructions of ``text`` that say what they are for, each as its purpose and what it
    tells the reader to do: ("To get your expenses reimbursed", "submit a claim ... within 30
    days of the expense")."""
    out: list[tuple[str, str]] = []
    for clause in _CLAUSE_BREAK.split(text):
        purpose = _PURPOSE.match(clause)
        if purpose is not None and _TYPES["steps"].match(clause[purpose.end() :]):
            out.append((purpose.group(1), clause[purpose.end() :]))
    return out


def says_when(text: str) -> str:
    """The clauses of ``text`` that say what happens (see :func:`gives`): where it gives the
    time of something that happens, not the reader's deadline."""
    return _stated(text)[1]


def gives(text: str, types: Sequence[str]) -> bool:
    """Whether ``text`` gives a value of ``types`` as an answer: :func:`has_type`, but a time
    (:data:`TIMES`) only in a clause that says what happens (:func:`_stated`: not the reader's
    deadline "submit a claim ... within 30 days", nor "claims older than 90 days are not
    paid")."""
    return has_type(_stated(text)[1] if TIMES & set(types) else text, types)


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
    "taxis", "reimburse" meets "reimbursement"): see :func:`derived_in`."""
    out = terms & tokens
    out.update(t for t in terms - out if derived_in(t, tokens))
    return out


SUFFIXES: frozenset[str] = frozenset({
    "s", "es", "e", "d", "ed", "ing", "er", "ers", "or", "ors", "al", "ally", "ly", "ness", "ment",
    "ments", "ement", "ance", "ence", "ory", "ion", "ions", "ation", "able", "ible", "ity", "y",
    "ies", "l", "ee", "ees", "ive", "ant", "ent", "ic", "ist", "en",
})  # fmt: skip
"""Endings that make another form of one word ("taxi"/"taxis", "replac"/"replacement",
"sick"/"sickness", "allow"/"allowance"; "travell"/"travel" as the stemmer leaves them), a last
consonant doubled before one ("forgot"/"forgotten"). A longer
word that starts with a shorter one but goes on otherwise is another word: "signature" is not
"sign", "timetable" not "time", "helpdesk" not "help", "Visitenkarten" not "visit"."""


IRREGULAR: dict[str, str] = {
    "paid": "pay", "lost": "lose", "sent": "send", "spent": "spend", "broke": "break",
    "broken": "break", "stole": "steal", "stolen": "steal", "chose": "choose", "chosen": "choose",
    "wrote": "write", "written": "write", "gave": "give", "given": "give", "brought": "bring",
    "kept": "keep", "held": "hold", "knew": "know", "known": "know", "began": "begin",
    "begun": "begin",
}  # fmt: skip
"""Irregular past forms the analyser keeps as written ("paid" stays "paid", while "pays" is
"pay"), with the word they are a form of: "When do I get paid back?" meets "pays approved
amounts", "What if I lose my laptop?" meets "a lost or stolen laptop". Forms that are another
word too ("left", "thought") are not listed."""
_IRREGULAR_FORMS: dict[str, frozenset[str]] = {}
for _form, _base in IRREGULAR.items():
    _IRREGULAR_FORMS[_form] = _IRREGULAR_FORMS.get(_form, frozenset()) | {_base}
    _IRREGULAR_FORMS[_base] = _IRREGULAR_FORMS.get(_base, frozenset()) | {_form}


def derived_in(term: str, tokens: frozenset[str]) -> bool:
    """Whether one of ``tokens`` is another form of ``term``: both of 4+ letters, one the other
    with an ending of :data:`SUFFIXES` ("taxi" and "taxis"), or an irregular form
    (:data:`IRREGULAR`: "paid" and "pay"); an exact match is the caller's check."""
    return not tokens.isdisjoint(_forms(term))


def holds(tokens: frozenset[str], term: str) -> bool:
    """Whether ``tokens`` hold the analysed word ``term`` or another form of it ("sickness" of
    "sick", :func:`derived_in`)."""
    return term in tokens or derived_in(term, tokens)


@lru_cache(maxsize=16_384)
def _forms(term: str) -> frozenset[str]:
    """The words of 4+ letters that are ``term`` with an ending of :data:`SUFFIXES` added or
    taken away, and its irregular forms, ``term`` itself left out (cached: questions
    repeat)."""
    irregular = _IRREGULAR_FORMS.get(term, frozenset())
    if len(term) < 4:
        return irregular
    # an ending may double the last consonant: "forgot"/"forgotten", "travel"/"travelling"
    longer = {term + ending for ending in SUFFIXES} | {term + term[-1] + e for e in SUFFIXES}
    shorter = {
        term[:i]
        for i in range(4, len(term))
        if term[i:] in SUFFIXES or (term[i] == term[i - 1] and term[i + 1 :] in SUFFIXES)
    }
    return frozenset(longer | shorter | irregular)


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
    topical: bool = True
    """False when the words the sentence itself shares with the question are only its names
    (and phrasing words) while the question has other words the sentences know."""


def score(
    question: str,
    sentences: Sequence[Sentence],
    similarities: Sequence[float] | None = None,
    *,
    similarity_weight: float = 0.4,
    type_bonus: float = 0.15,
    entity_bonus: float = 0.15,
    instruction: Callable[[Sentence], bool] | None = None,
    asks: str | None = None,
    foreign: bool = False,
) -> list[Scored]:
    """Every sentence scored against ``question`` (in input order).

    ``score = (1 - w) * lexical + w * similarity + type_bonus * typed + entity_bonus * entity``
    with ``w = similarity_weight`` when ``similarities`` are given, else ``w = 0``. A question
    asking how to do something is typed by an instruction ("Open the GlobalProtect app ...")
    only when ``instruction`` (if given) says it is one for what the question asks about. The
    answer type is that of ``asks`` when it asks for one: a follow-up read with the thread's
    topic ("How long does reimbursement take?" then "And when do I get paid back?") asks its
    own question ("and in Paris?" asks the thread's). For a question of when something
    happens (:data:`TIMES`), a sentence shares the words it does not deny and gives a time only
    as :func:`gives` says. ``foreign``: the question is in another language than the sentences;
    a word of it that none of them holds, in itself or its section, is a word of its language
    that none could hold, not a rare topic they all lack: it tells no sentence apart, as a word
    every sentence holds, and weighs what such a word does (1, the least). So the word it
    shares ("taxi" of "¿Puedo pedir el reembolso de un taxi?") is not drowned by its six
    Spanish words; a question in the sentences' language keeps a missing word's full weight
    ("printer" of "What is the printer password?").
    """
    terms = set(analyze(question))
    count = len(sentences)
    if count == 0:
        return []
    types = (answer_types(asks) if asks is not None else ()) or answer_types(question)
    values = tuple(t for t in types if t != "steps")
    # when something happens: a sentence says it where it does not deny it, and gives its time
    # where it is no instruction to the reader (see _stated)
    timed = bool(TIMES & set(values))
    matched = [
        _matches(terms, frozenset(analyze(_stated(s.text)[0])) if timed else s.tokens)
        for s in sentences
    ]
    in_context = [_matches(terms, s.context_tokens) for s in sentences]
    light = light_words(question)
    # words of another language that no sentence could hold (see ``foreign``)
    unheld = (
        {t for t in terms if not any(t in m for m in (*matched, *in_context))} if foreign else set()
    )
    weight = {
        # a light word weighs a flat quarter: phrasing no sentence repeats ("What did I *tell*
        # you *about* my desk?") must not count as a rare topic word the sentences lack
        t: LIGHT_WEIGHT
        if t in light
        else 1.0
        if t in unheld
        else 1.0 + float(np.log((count + 1) / (1 + sum(t in m for m in matched))))
        for t in terms
    }
    total = sum(weight.values()) or 1.0
    steps = "steps" in types
    asked_names = entities(question)
    found = [entities(s.text) for s in sentences]
    # a name every other sentence repeats ("VPN" in the VPN guide) tells nothing apart
    names = {n for n in asked_names if sum(n in f for f in found) * 3 <= count}
    # the question's other words that a sentence holds: one that shares only the names ("What
    # is the Berlin office's phone number?" and "Customer visit to Acme Ltd, Berlin") is not on
    # its topic
    named = set(analyze(" ".join(asked_names)))
    topic = {t for t in terms - named - light if any(t in m for m in matched)}
    w = similarity_weight if similarities is not None else 0.0
    sims = list(similarities) if similarities is not None else [0.0] * count
    out: list[Scored] = []
    for i, (sentence, sim) in enumerate(zip(sentences, sims, strict=True)):
        lexical = (
            0.8 * sum(weight[t] for t in matched[i]) / total
            + 0.2 * sum(weight[t] for t in in_context[i]) / total
        )
        typed = bool(values) and gives(sentence.text, values)
        if not typed and steps and has_type(sentence.text, ("steps",)):
            # an instruction answers "How do I ...?" only when it is one for that: "Attach a
            # photo of every receipt" (it mentions a card slip) is no step of ordering cards
            typed = instruction is None or instruction(sentence)
        # a name tells apart sentences on the question's topic; it does not make one: a
        # sentence that shares nothing but the name gets no bonus for it ("Can I fly business
        # class to Tokyo?" is not answered by the hotel limits that list Tokyo)
        shared_names = names & found[i]
        on_topic = any(t not in shared_names for t in matched[i])
        entity = len(shared_names) / len(names) if names and on_topic else 0.0
        value = (1 - w) * lexical + w * sim + type_bonus * typed + entity_bonus * entity
        own = matched[i] - light
        topical = not (topic and own and own <= named)
        out.append(Scored(sentence, value, lexical, sim, typed, entity, bool(matched[i]), topical))
    return out
