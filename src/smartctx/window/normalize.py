"""Text normalisation for deduplication: the exact-duplicate key and the semantic guard.

Two texts are *exact* duplicates when their normalised forms (NFKC, casefold, white space
collapsed) are equal. Two texts may only be *semantic* duplicates when they also carry the same
numbers and the same negation / on-off words: embeddings place "turn the lights on" and "turn the
lights off" very close (USE gives them a cosine of 0.935), yet they mean opposite things.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata

from smartctx.window.phrases import canonical_phrase

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")

# Words that flip or switch meaning. Each maps to a canonical marker, so "don't" and "do not"
# both mark negation, while "on" and "off" stay distinct.
_MARKERS: dict[str, str] = {
    # negation
    "not": "neg",
    "no": "neg",
    "never": "neg",
    "none": "neg",
    "nothing": "neg",
    "nobody": "neg",
    "neither": "neg",
    "nor": "neg",
    "without": "neg",
    "cannot": "neg",
    "n't": "neg",
    # switches and opposites
    "on": "on",
    "off": "off",
    "enable": "enable",
    "enabled": "enable",
    "enables": "enable",
    "disable": "disable",
    "disabled": "disable",
    "disables": "disable",
    "open": "open",
    "opened": "open",
    "close": "close",
    "closed": "close",
    "start": "start",
    "started": "start",
    "stop": "stop",
    "stopped": "stop",
    "allow": "allow",
    "allowed": "allow",
    "deny": "deny",
    "denied": "deny",
    "yes": "yes",
    "true": "true",
    "false": "false",
    "up": "up",
    "down": "down",
    "lock": "lock",
    "unlock": "unlock",
    "add": "add",
    "remove": "remove",
    "before": "before",
    "after": "after",
    "increase": "increase",
    "decrease": "decrease",
}

_WORD_RE = re.compile(r"[^\W\d_]+n't|n't(?![^\W\d_])|[^\W\d_]+")
"""A text's letter runs ("don't" whole): a marker is a whole run, or a run ending in "n't"."""

# Korean negation and on/off stems, matched as substrings (Korean attaches particles to stems).
_KOREAN_MARKERS: tuple[tuple[str, str], ...] = (
    ("안 ", "neg"),
    ("않", "neg"),
    ("못", "neg"),
    ("없", "neg"),
    ("끄", "off"),
    ("꺼", "off"),
    ("켜", "on"),
    ("키", "on"),
)


def normalize_text(text: str) -> str:
    """NFKC, casefold and collapsed white space: the form exact duplicates share."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")
    return " ".join(folded.split())


def text_key(text: str) -> str:
    """A stable hash of the normalised text (the exact-duplicate index key)."""
    return key_of_normalized(normalize_text(text))


def key_of_normalized(norm: str) -> str:
    """:func:`text_key` of an already normalised text. A greeting, thanks or farewell formula
    is keyed by its meaning (:mod:`smartctx.window.phrases`): "Hello" and "您好" share a key."""
    formula = canonical_phrase(norm)
    keyed = f"\x00formula:{formula}" if formula is not None else norm
    return hashlib.blake2b(keyed.encode(), digest_size=16).hexdigest()


def guard_signature(text: str) -> frozenset[str]:
    """Numbers and negation / on-off markers of ``text``.

    Two texts whose signatures differ are never semantic duplicates, however close their
    embeddings are.
    """
    return signature_of_normalized(normalize_text(text))


@functools.lru_cache(maxsize=4096)
def signature_of_normalized(norm: str) -> frozenset[str]:
    """:func:`guard_signature` of an already normalised text (the last 4,096 are kept: the
    knowledge chunks a served context retrieves come back turn after turn)."""
    out: set[str] = {f"#{n.replace(',', '')}" for n in _NUMBER.findall(norm)}
    for word in _WORD_RE.findall(norm):
        if word.endswith("n't"):
            out.add("neg")
        else:
            marker = _MARKERS.get(word)
            if marker is not None:
                out.add(marker)
    padded = f" {norm} "
    for stem, marker in _KOREAN_MARKERS:
        if stem in padded:
            out.add(marker)
    return frozenset(out)
