"""Small text helpers shared by the offline responder, the knowledge reader and the fact
extractor: sentence splitting, question detection, first to second person."""

from __future__ import annotations

import re

_BREAK = re.compile(r"\n\s*\n|\n\s*(?=#|[-*+]\s|\d+[.)]\s|>)")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+(?=[^\s])|(?<=[।])\s*")
_MARKUP = re.compile(r"^\s*(?:#+|[-*+]|\d+[.)]|>)\s*|\*\*|__")
_FIRST_PERSON = (
    (re.compile(r"\bI am\b"), "you are"),
    (re.compile(r"\bI'm\b"), "you're"),
    (re.compile(r"\bI was\b"), "you were"),
    (re.compile(r"\bI\b"), "you"),
    (re.compile(r"\bmy\b", re.IGNORECASE), "your"),
    (re.compile(r"\bmine\b", re.IGNORECASE), "yours"),
    (re.compile(r"\bmyself\b", re.IGNORECASE), "yourself"),
    (re.compile(r"\bme\b"), "you"),
)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: paragraphs and list items first, then sentence punctuation.

    Markdown markers (headings, bullets, bold) are removed; wrapped lines are joined; headings
    are dropped (a heading is not an answer).
    """
    out: list[str] = []
    for block in _BREAK.split(text):
        stripped = block.strip()
        if not stripped or stripped.startswith("#"):
            continue
        joined = " ".join(line.strip() for line in stripped.splitlines())
        for piece in _SENTENCE.split(_MARKUP.sub("", joined)):
            clean = _MARKUP.sub("", piece).strip()
            if clean:
                out.append(clean)
    return out


_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
MAX_ITEM_WORDS = 80


def split_units(text: str) -> list[str]:
    """Like :func:`split_sentences`, but a list item up to :data:`MAX_ITEM_WORDS` words stays
    one unit ("4. Approve the push ... The prompt expires after 60 seconds ..."): the
    sentences of one step answer together."""
    out: list[str] = []
    for block in _BREAK.split(text):
        stripped = block.strip()
        if not stripped or stripped.startswith("#"):
            continue
        joined = " ".join(line.strip() for line in stripped.splitlines())
        if _ITEM.match(joined) and len(joined.split()) <= MAX_ITEM_WORDS:
            clean = _MARKUP.sub("", _MARKUP.sub("", joined)).strip()
            if clean:
                out.append(clean)
            continue
        out.extend(split_sentences(stripped))
    return out


def to_second_person(sentence: str) -> str:
    """``sentence`` as said back to its author ("My number is 4" -> "Your number is 4")."""
    out = sentence
    for pattern, replacement in _FIRST_PERSON:
        out = pattern.sub(replacement, out)
    return out[:1].upper() + out[1:] if out else out


def is_question(sentence: str) -> bool:
    """True for a question (ends with a question mark, in any script)."""
    return sentence.rstrip().endswith(("?", "？"))


_TROUBLE = re.compile(
    r"\b(?:forg[oe]t(?:ten)?|lost|locked|broken|broke|stolen|stuck|fails?|failed|failing|"
    r"crash(?:es|ed)?|expired|error|problem|trouble|issue|can'?t|cannot|won'?t|doesn'?t|"
    r"not working|help|"  # English
    r"vergessen|verloren|gesperrt|kaputt|gestohlen|funktioniert nicht|hilfe|"  # German
    r"olvid[eéó]|perd[ií]|bloquead[oa]|roto|robad[oa]|no funciona|ayuda|"  # Spanish
    r"oubli[ée]|perdu|bloqué|cassé|volé|ne marche pas|aide)\b"  # French
    r"|잊어|잃어|잠겼|고장|안 ?돼|안 ?되|도와",  # Korean
    re.IGNORECASE,
)


def reports_a_problem(text: str) -> bool:
    """True when ``text`` tells of a problem ("I forgot my password", "my laptop was stolen",
    "VPN doesn't work"): a request for help, even without a question mark."""
    return bool(_TROUBLE.search(text))
