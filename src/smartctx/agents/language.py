"""The language of a question, and the few phrases the offline responder says in it.

:func:`detect_language` is deliberately small: the script decides for Korean, Japanese,
Chinese, Hindi, Russian and Arabic; for Latin-script text a handful of frequent function words
and letters decide between German, Spanish, French and English (the default). The responder
cannot translate evidence offline, so in another language it says where its answer comes from in
that language and quotes the evidence as written.
"""

from __future__ import annotations

import re

_SCRIPTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ko", re.compile(r"[\uac00-\ud7a3]")),
    ("ja", re.compile(r"[\u3040-\u30ff]")),
    ("zh", re.compile(r"[\u4e00-\u9fff]")),
    ("hi", re.compile(r"[\u0900-\u097f]")),
    ("ru", re.compile(r"[\u0400-\u04ff]")),
    ("ar", re.compile(r"[\u0600-\u06ff]")),
)
_WORDS: dict[str, frozenset[str]] = {
    "de": frozenset(
        [
            "der",
            "die",
            "das",
            "und",
            "ist",
            "ich",
            "wie",
            "wo",
            "wer",
            "wann",
            "was",
            "mit",
            "nicht",
            "ein",
            "eine",
            "mein",
            "meine",
            "kann",
            "muss",
            "bitte",
            "viele",
            "viel",
            "lange",
            "für",
            "auf",
            "habe",
            "hat",
            "sind",
            "wird",
            "werden",
            "mich",
            "mir",
            "dem",
            "den",
        ]
    ),
    "es": frozenset(
        [
            "el",
            "la",
            "los",
            "las",
            "y",
            "es",
            "que",
            "cómo",
            "como",
            "dónde",
            "cuándo",
            "cuántos",
            "cuántas",
            "cuánto",
            "qué",
            "quién",
            "mi",
            "puedo",
            "para",
            "por",
            "con",
            "una",
            "un",
            "de",
            "del",
            "tengo",
            "hay",
            "se",
        ]
    ),
    "fr": frozenset(
        [
            "le",
            "la",
            "les",
            "et",
            "est",
            "je",
            "comment",
            "où",
            "quand",
            "combien",
            "quel",
            "quelle",
            "mon",
            "ma",
            "puis",
            "pour",
            "avec",
            "une",
            "un",
            "de",
            "du",
            "des",
            "ai",
            "il",
            "y",
        ]
    ),
    "en": frozenset(
        [
            "the",
            "and",
            "is",
            "i",
            "how",
            "where",
            "when",
            "what",
            "who",
            "my",
            "can",
            "for",
            "with",
            "a",
            "an",
            "of",
            "do",
            "does",
            "to",
            "in",
            "on",
            "have",
        ]
    ),
}
_WORD = re.compile(r"[^\W\d_]+")

LEAD_INS: dict[str, str] = {
    "de": "Laut {source} (auf Englisch):",
    "es": "Según {source} (en inglés):",
    "fr": "Selon {source} (en anglais) :",
    "ko": "{source}에 따르면 (영어 원문):",
    "ja": "{source}によると（英語の原文）:",
    "zh": "根据 {source}（英文原文）：",
}
"""How an answer quoting English evidence starts in the question's language."""

NO_INFORMATION: dict[str, str] = {
    "de": "Dazu habe ich keine Informationen.",
    "es": "No tengo esa información.",
    "fr": "Je n'ai pas cette information.",
    "ko": "그 정보는 가지고 있지 않습니다.",
    "ja": "その情報はありません。",
    "zh": "我没有这方面的信息。",
}
"""The abstention in other languages (the English one is always appended)."""


def detect_language(text: str) -> str:
    """An ISO 639-1 code for ``text`` (``en`` when unsure)."""
    for code, pattern in _SCRIPTS:
        if pattern.search(text):
            return code
    if "¿" in text or "¡" in text or "ñ" in text:
        return "es"
    if "ß" in text or re.search(r"[äöü]", text):
        return "de"
    found = [w.casefold() for w in _WORD.findall(text)]
    best, hits = "en", sum(w in _WORDS["en"] for w in found)
    for code, vocabulary in _WORDS.items():
        count = sum(w in vocabulary for w in found)
        if count > hits:
            best, hits = code, count
    return best
