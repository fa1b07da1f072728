"""Small text helpers shared by the offline responder, the knowledge reader and the fact
extractor: units (sentences, list items whole), how-to questions and problem reports, first to
second person. Sentences and questions themselves are in :mod:`smartctx.core.sentences`."""

from __future__ import annotations

import re

from smartctx.core.sentences import BREAK, MARKUP, split_sentences

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


_ITEM = re.compile(r"^\s*(?:[-*+]|(?P<number>\d+)[.)])\s+")
MAX_ITEM_WORDS = 80


def split_units(text: str) -> list[str]:
    """Like :func:`split_sentences`, but a list item up to :data:`MAX_ITEM_WORDS` words stays
    one unit ("4. Approve the push ... The prompt expires after 60 seconds ..."): the
    sentences of one step answer together."""
    return [unit for unit, _ in numbered_units(text)]


def numbered_units(text: str) -> list[tuple[str, int | None]]:
    """:func:`split_units` with each unit's number in an ordered list ("2. Enter the portal
    address ..." -> 2), None for any other unit (a sentence, a bullet, a long item cut into
    sentences)."""
    out: list[tuple[str, int | None]] = []
    for block in BREAK.split(text):
        stripped = block.strip()
        if not stripped or stripped.startswith("#"):
            continue
        joined = " ".join(line.strip() for line in stripped.splitlines())
        item = _ITEM.match(joined)
        if item is not None and len(joined.split()) <= MAX_ITEM_WORDS:
            clean = MARKUP.sub("", MARKUP.sub("", joined)).strip()
            if clean:
                number = item.group("number")
                out.append((clean, int(number) if number is not None else None))
            continue
        out.extend((sentence, None) for sentence in split_sentences(stripped))
    return out


_HOW_TO = re.compile(
    r"\bhow\s+(?:do|does|can|could|should|would|to)\b|\bwhat\s+(?:are\s+the\s+)?steps\b"
    r"|\bwhat\s+(?:do|should)\s+i\s+do\b|\bset\s*up\b"  # English
    r"|\bwie\s+(?:kann|k\u00f6nnen|mache|machen|muss|m\u00fcssen|soll|sollen|gehe|geht|"
    r"richte|verbinde|bekomme|beantrage|setze|melde|reiche)\b"  # German
    r"|^\W*comment\b|\bcomment\s+(?:je|on|puis|faire|se|dois|peut|peux|est-ce)\b"  # French
    r"|^\W*c[o\u00f3]mo\b|\bc\u00f3mo\b|\bcome\s+(?:posso|faccio|si)\b"  # Spanish, Italian
    r"|\uc5b4\ub5bb\uac8c|\u0915\u0948\u0938\u0947",  # Korean, Hindi
    re.IGNORECASE,
)


def asks_how(question: str) -> bool:
    """True for a question that asks how to do something ("How do I reset my password?",
    "Wie verbinde ich mich mit dem VPN?", "Comment se connecter ?"): its answer is a
    procedure. "How many ...", "How long ..." ask for a value, not a procedure."""
    return _HOW_TO.search(question) is not None


def to_second_person(sentence: str) -> str:
    """``sentence`` as said back to its author ("My number is 4" -> "Your number is 4")."""
    out = sentence
    for pattern, replacement in _FIRST_PERSON:
        out = pattern.sub(replacement, out)
    return out[:1].upper() + out[1:] if out else out


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
