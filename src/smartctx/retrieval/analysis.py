"""Text analysis for lexical search: words that survive every script, light English stemming.

``analyze(text)`` is what BM25 indexes and what it queries with. Contract:
- NFKC-normalised and case-folded, so "Café" and "CAFÉ" meet;
- a word is a run of letters, digits and combining marks, so Devanagari vowel signs (matras) stay
  inside their word ("हिन्दी" is one token, where ``\\w+`` alone would cut it in five);
- English stop words (bm25s' list) are dropped and English words are lightly stemmed
  ("hiking", "hikes" and "hiked" all give "hike"): a conservative suffix stripper, not Porter;
- Hangul, kana and CJK words also yield their character bigrams, because Korean attaches
  particles to nouns ("서울에서" still matches "서울");
- deterministic, pure, and never returns an empty token.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from bm25s.stopwords import STOPWORDS_EN

STOPWORDS: frozenset[str] = frozenset(STOPWORDS_EN) | frozenset(
    {
        "i",
        "me",
        "my",
        "you",
        "your",
        "we",
        "our",
        "he",
        "she",
        "his",
        "her",
        "them",
        "do",
        "did",
        "does",
        "was",
        "were",
        "been",
        "has",
        "have",
        "had",
        "am",
        "what",
        "when",
        "where",
        "who",
        "how",
        "which",
        "would",
        "could",
        "should",
        "can",
        "its",
        "so",
        "us",
    }
)

_VOWELS = set("aeiouy")
_DOUBLE = {"bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt"}
_IRREGULAR = {
    "went": "go",
    "gone": "go",
    "ran": "run",
    "saw": "see",
    "seen": "see",
    "bought": "buy",
    "made": "make",
    "took": "take",
    "taken": "take",
    "got": "get",
    "gotten": "get",
    "felt": "feel",
    "met": "meet",
    "told": "tell",
    "found": "find",
    "children": "child",
    "kids": "kid",
    "people": "person",
    "painted": "paint",
}


@lru_cache(maxsize=1)
def _word_pattern() -> re.Pattern[str]:
    """Letters, digits and every combining mark of the Basic Multilingual Plane."""
    marks: list[tuple[int, int]] = []
    for code in range(0x300, 0x10000):
        if unicodedata.category(chr(code)) in ("Mn", "Mc", "Me"):
            if marks and marks[-1][1] == code - 1:
                marks[-1] = (marks[-1][0], code)
            else:
                marks.append((code, code))
    ranges = "".join(f"\\u{a:04x}-\\u{b:04x}" if a != b else f"\\u{a:04x}" for a, b in marks)
    return re.compile(f"(?:[^\\W_]|[{ranges}])+")


def _is_cjk(word: str) -> bool:
    """True when the word is in a script written without spaces between morphemes."""
    first = ord(word[0])
    return (
        0xAC00 <= first <= 0xD7AF  # Hangul syllables
        or 0x3040 <= first <= 0x30FF  # kana
        or 0x4E00 <= first <= 0x9FFF  # CJK ideographs
    )


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """A conservative English stem: plurals, -ing, -ed, -ly. Non-ASCII words are unchanged.
    Cached: the same words come back in every text."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if not word.isascii() or not word.isalpha() or len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if not _VOWELS & set(base):
                return word
            if base[-2:] in _DOUBLE:
                return base[:-1]
            if base.endswith(("at", "iz", "bl", "ur", "ik", "ov", "in", "iv", "ag")) or (
                len(base) <= 4 and base[-1] not in _VOWELS and base[-2] in _VOWELS
            ):
                return base + "e"
            return base
    if word.endswith("ly") and len(word) > 5:
        return word[:-2]
    return word


def words(text: str) -> list[str]:
    """The normalised words of ``text``, in order, stop words included, unstemmed."""
    norm = unicodedata.normalize("NFKC", text).casefold()
    return _word_pattern().findall(norm)


CACHED_TEXT = 1_000
"""Texts up to this many characters keep their tokens in a bounded cache (a served turn analyses
the same knowledge sentences, memories and messages again and again)."""


def analyze(text: str, *, stop: bool = True) -> list[str]:
    """BM25 tokens of ``text`` (see the module contract). ``stop=False`` keeps stop words."""
    if len(text) <= CACHED_TEXT:
        return list(_analyze_cached(text, stop))
    return _analyze(text, stop)


@lru_cache(maxsize=4_096)
def _analyze_cached(text: str, stop: bool) -> tuple[str, ...]:
    return tuple(_analyze(text, stop))


def _analyze(text: str, stop: bool) -> list[str]:
    out: list[str] = []
    for word in words(text):
        if stop and word in STOPWORDS:
            continue
        if _is_cjk(word):
            out.append(word)
            out.extend(word[i : i + 2] for i in range(len(word) - 1))
        else:
            out.append(stem(word))
    return out
