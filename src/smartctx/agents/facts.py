"""A light fact extractor: which sentences of a user message are worth remembering.

``extract_facts(text)`` returns the sentences that state something about the user, in order:
"my X is Y" ("My employee number is 48213"), "I am / I'm ..." ("I'm allergic to nuts"),
"I work/live/prefer/use/have ..." statements, "call me X", changes ("my desk moved from 4B to
5C"), and what follows "remember that" /
"note that" / "keep in mind that" (a request to remember after the statement, ", remember
that", is left out); Korean "제/내 X는 Y" and "기억해" forms. Questions are never
facts. Pure and deterministic; no model.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from smartctx.core.sentences import is_question, split_sentences

_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:remember|note|keep\s+in\s+mind|don['’]t\s+forget|for\s+the\s+record)\b"
    r"(?:\s+(?:that|this))?\s*[:,-]?\s*(?P<rest>.+)$",
    re.IGNORECASE,
)
_REMEMBER_AFTER = re.compile(
    r"\s*[,;:\u2013\u2014-]\s*(?:so\s+)?(?:please\s+)?(?:remember|note|keep\s+in\s+mind|"
    r"don['\u2019]t\s+forget)(?:\s+(?:that|this|it))?(?:\s*,?\s*please)?\s*[.!]*\s*$",
    re.IGNORECASE,
)
"""A request to remember after the statement ("I'm allergic to peanuts, remember that"): not
part of the fact."""
_LEAD_IN = re.compile(
    r"^(?:actually|by\s+the\s+way|btw|oh|fyi|just\s+so\s+you\s+know|quick\s+update|update)"
    r"\s*[,:;\u2013\u2014-]?\s+(?=\S)",
    re.IGNORECASE,
)
"""A word that opens a statement without being part of it ("Actually, my manager is now Tom
Berg.")."""
_FACT = re.compile(
    r"\bmy\s+[\w'-]+(?:\s+[\w'-]+){0,4}?\s+(?:is|are|was|were|=|:)\s+\S"
    r"|\b(?:i\s+am|i['’]m)\s+(?!(?:asking|wondering|trying|looking|not\s+sure|sorry|here|"
    # "I'm going to Berlin" is a plan to note, "I'm going to reset it" an intention
    r"going\b(?!\s+to\s+(?-i:[A-Z]))|"
    r"just|afraid|confused|curious|back|done|fine|ok|okay)\b)\S"
    r"|\bi\s+(?:work|live|prefer|like|love|hate|use|have|own|speak|was\s+born|moved|joined|"
    r"report\s+to|sit|drive|study)\b"
    r"|\bcall\s+me\s+\S"
    r"|\bmy\s+[\w'-]+(?:\s+[\w'-]+){0,3}?\s+(?:has\s+)?(?:moved|changed|switched)\b.*\bto\s+\S",
    re.IGNORECASE,
)
_ATTRIBUTE = (
    re.compile(
        r"\bmy\s+(?P<attr>[\w'-]+(?:\s+[\w'-]+){0,3}?)\s+(?:has\s+)?(?:moved|changed|"
        r"switched)\s+(?:from\s+(?P<old>.+?)\s+)?to\s+(?P<value>.+?)\s*[.!]?$",
        re.IGNORECASE,
    ),
    re.compile(
        r"\bmy\s+(?P<attr>[\w'-]+(?:\s+[\w'-]+){0,3}?)\s+(?:is|are|=|:)\s+(?:now\s+)?"
        r"(?:in\s+|at\s+|on\s+)?(?P<value>.+?)\s*[.!]?$",
        re.IGNORECASE,
    ),
)
_NAMED = (
    r"ich\s+hei(?:ß|ss)e|mein\s+name\s+ist|me\s+llamo|mi\s+nombre\s+es|je\s+m['’]appelle"
    r"|mon\s+nom\s+est"
)
"""How a German, Spanish or French speaker gives their name ("me llamo Ana")."""
_I_AM = r"ich\s+bin|soy|je\s+suis"
"""German, Spanish and French "I am" ("ich bin Jonas aus ...", but also "ich bin neu")."""
_INTRODUCTION = re.compile(
    r"(?:^|[,.!;]\s*|(?i:\b(?:hi|hello|hey|hallo|hola|bonjour|salut)\b)[,!]?\s+)"
    rf"(?i:i['’]m|i\s+am|call\s+me|my\s+name['’]s|{_I_AM}|{_NAMED})\s+"
    r"(?P<name>[^\W\d_]+(?:\s+[^\W\d_]+)?)"
    r"(?=\s*(?:[,.!;]|$)|\s+(?i:and|from|here|und|aus|vom|von|y|de|del|et|du)\b)"
)
_GERMAN_BIN = re.compile(r"\bich\s+bin\s", re.IGNORECASE)
_GERMAN_ROLE = re.compile(r"(?:er|erin|in|ent|entin|ant|antin|ist|istin|or|e)$")
"""Endings of the German nouns people say they are ("Entwickler", "Studentin", "Deutsche"):
after "ich bin" such a word is no name (a name then comes with "ich heiße")."""
_NOT_NAMES = frozenset(
    {
        "american",
        "australian",
        "austrian",
        "belgian",
        "brazilian",
        "british",
        "canadian",
        "chinese",
        "danish",
        "dutch",
        "english",
        "finnish",
        "french",
        "german",
        "greek",
        "indian",
        "irish",
        "italian",
        "japanese",
        "korean",
        "mexican",
        "norwegian",
        "polish",
        "portuguese",
        "russian",
        "scottish",
        "spanish",
        "swedish",
        "swiss",
        "turkish",
        "welsh",
        "catholic",
        "christian",
        "muslim",
        "jewish",
        "buddhist",
        "hindu",
        "vegan",
        "vegetarian",
        "fine",
        "good",
        "great",
        "ok",
        "okay",
        "sorry",
        "back",
        "done",
        "ready",
        "here",
        "new",
        "happy",
        "glad",
        "sure",
    }
)
_FACT_OTHER = re.compile(
    # German, Spanish and French self-statements: a name given ("ich bin Jonas", "me llamo
    # Ana", "je m'appelle Luc"), where one works or lives; not "ich bin neu" or "je suis bloqué"
    rf"\b(?:{_I_AM})\s+(?-i:[A-ZÀ-ÖØ-Þ])|\b(?:{_NAMED})\s+\S"
    r"|\bich\s+(?:arbeite|wohne|lebe)\b|\b(?:trabajo|vivo)\s+en\b"
    r"|\bje\s+(?:travaille|vis)\b|\bj['’]habite\b",
    re.IGNORECASE,
)
_FACT_KO = re.compile(r"(?:^|\s)(?:제|내|나의|저의)\s*\S+\s*(?:은|는|이|가)\s+\S|기억해")
_REMEMBER_KO = re.compile(r"^(?P<rest>.+?)\s*(?:라는\s*(?:걸|것을)|을|를)?\s*기억해\S*\s*$")


def fact_attribute(fact: str) -> tuple[str, str] | None:
    """``(attribute, value)`` of a fact about one attribute of the user: "My desk is 4B" ->
    ``("desk", "4B")``, "My desk moved from 4B to 5C" -> ``("desk", "5C")``; ``None`` for
    other facts. A later fact about the same attribute supersedes an earlier one."""
    for pattern in _ATTRIBUTE:
        match = pattern.search(fact)
        if match is not None:
            attribute = " ".join(match.group("attr").casefold().split())
            return attribute, match.group("value").strip()
    return None


def restated_later(attributes: Sequence[Collection[str]]) -> list[bool]:
    """For statements oldest first, each given by the attributes it states
    (:func:`fact_attribute`), whether every one of them is stated again by a later statement:
    then the later ones supersede it ("My manager is Ana Lopez." before "My manager is now Tom
    Berg."). A statement of no attribute is never restated. One pass from the newest."""
    later: set[str] = set()
    out = [False] * len(attributes)
    for n in range(len(attributes) - 1, -1, -1):
        stated = attributes[n]
        out[n] = bool(stated) and later.issuperset(stated)
        later.update(stated)
    return out


def introduced_name(text: str) -> str | None:
    """The name a user introduces themselves with ("Hi, I'm Dana and I just joined" ->
    ``"Dana"``; "I am Li Wei." -> ``"Li Wei"``), or ``None``: a capitalised word or two right
    after "I'm" / "I am" / "call me" at the start of a sentence or after a greeting, ending the
    clause; nationalities and the like ("I'm German") are not names."""
    for match in _INTRODUCTION.finditer(text):
        words = match.group("name").split()
        while words and not _capitalised(words[-1]):
            words.pop()  # "I'm Tomás and": the name is the capitalised words
        if words and all(_capitalised(w) for w in words):
            if _GERMAN_BIN.search(match.group(0)) and _GERMAN_ROLE.search(words[0]):
                continue  # German capitalises every noun: "Ich bin Entwickler" names no one
            return None if words[0].casefold() in _NOT_NAMES else " ".join(words)
    return None


def _capitalised(word: str) -> bool:
    """A name's word: a capital letter, then lower-case letters (any script with case)."""
    return word[0].isupper() and word[1:].islower()


def name_fact(text: str) -> str | None:
    """ "My name is <name>." for a self-introduction in ``text`` (:func:`introduced_name`), so
    that "What is my name?" meets it in words; ``None`` otherwise or when ``text`` says it so."""
    name = introduced_name(text)
    if name is None or re.search(r"\bmy\s+name\s+is\b", text, re.IGNORECASE):
        return None
    return f"My name is {name}."


def stated_facts(text: str) -> list[str]:
    """What a user's message states about them: its self-introduced name as "My name is X."
    (:func:`name_fact`) first, then :func:`extract_facts`."""
    named = name_fact(text)
    return [named, *extract_facts(text)] if named is not None else extract_facts(text)


def extract_facts(text: str) -> list[str]:
    """The fact sentences of ``text`` (see the module docstring), unique, in order."""
    out: list[str] = []
    for sentence in split_sentences(text):
        if is_question(sentence):
            continue
        remember = _REMEMBER.match(sentence) or _REMEMBER_KO.match(sentence)
        fact: str | None = None
        if remember is not None:
            rest = remember.group("rest").strip()
            fact = rest[:1].upper() + rest[1:] if rest else None
        elif _FACT.search(sentence) or _FACT_KO.search(sentence) or _FACT_OTHER.search(sentence):
            fact = _REMEMBER_AFTER.sub(lambda m: "." if "." in m.group(0) else "", sentence)
            if _LEAD_IN.match(fact):
                rest = _LEAD_IN.sub("", fact)
                fact = rest[:1].upper() + rest[1:]
        if fact and fact not in out:
            out.append(fact)
    return out
