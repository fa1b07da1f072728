"""The language of a question, and the few phrases the offline responder says in it.

:func:`detect_language` is deliberately small: the script decides for Korean, Japanese,
Chinese, Hindi, Russian and Arabic; for Latin-script text a handful of frequent function words
and letters decide between German, Spanish, French and English (the default). The responder
cannot translate evidence offline, so in another language it says where its answer comes from in
that language and quotes the evidence as written.
"""

from __future__ import annotations

import re
import unicodedata

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

NOTED: dict[str, str] = {
    "de": "Notiert:",
    "es": "Anotado:",
    "fr": "C'est noté :",
}
"""How a statement the user made of themselves is acknowledged in other languages (their words
follow as said; English says them back in the second person)."""

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


# Small talk: a message made only of these words (and punctuation) gets a social reply, not the
# abstention. Each core word names its kind and language; the fillers may surround any of them.
_SMALL_TALK_CORE: dict[str, tuple[str, str]] = {
    **{w: ("thanks", "en") for w in ("thanks", "thank", "thx", "ty", "cheers")},
    **{w: ("thanks", "de") for w in ("danke", "dankeschön", "dank")},
    **{w: ("thanks", "es") for w in ("gracias",)},
    **{w: ("thanks", "fr") for w in ("merci",)},
    **{w: ("thanks", "ko") for w in ("감사합니다", "고맙습니다", "고마워요", "감사해요")},
    **{w: ("thanks", "hi") for w in ("धन्यवाद", "शुक्रिया")},
    **{w: ("thanks", "ja") for w in ("ありがとう", "ありがとうございます")},
    **{w: ("thanks", "zh") for w in ("谢谢",)},
    **{w: ("hello", "en") for w in ("hello", "hi", "hey", "morning", "evening", "afternoon")},
    **{w: ("hello", "de") for w in ("hallo", "moin", "servus")},
    **{w: ("hello", "es") for w in ("hola",)},
    **{w: ("hello", "fr") for w in ("bonjour", "salut")},
    **{w: ("hello", "ko") for w in ("안녕하세요", "안녕")},
    **{w: ("hello", "hi") for w in ("नमस्ते",)},
    **{w: ("hello", "ja") for w in ("こんにちは",)},
    **{w: ("hello", "zh") for w in ("你好",)},
    **{w: ("bye", "en") for w in ("bye", "goodbye")},
    **{w: ("bye", "de") for w in ("tschüss", "tschüs", "wiedersehen")},
    **{w: ("bye", "es") for w in ("adiós", "adios", "chao")},
    **{w: ("bye", "fr") for w in ("revoir",)},
}
_SMALL_TALK_FILLERS = frozenset(
    [
        "you",
        "so",
        "much",
        "very",
        "many",
        "a",
        "lot",
        "ok",
        "okay",
        "great",
        "cool",
        "perfect",
        "awesome",
        "nice",
        "good",
        "that",
        "helps",
        "helped",
        "again",
        "all",
        "for",
        "the",
        "help",
        "there",
        "everyone",
        "sehr",
        "vielen",
        "schön",
        "guten",
        "tag",
        "auf",
        "muchas",
        "buenos",
        "días",
        "beaucoup",
        "au",
        "bien",
        "see",
        "later",
    ]
)
SMALL_TALK_REPLIES: dict[str, dict[str, str]] = {
    "thanks": {
        "en": "You're welcome!",
        "de": "Gern geschehen!",
        "es": "¡De nada!",
        "fr": "Avec plaisir !",
        "ko": "천만에요!",
        "hi": "आपका स्वागत है!",
        "ja": "どういたしまして！",
        "zh": "不客气！",
    },
    "hello": {
        "en": "Hello! How can I help?",
        "de": "Hallo! Wie kann ich helfen?",
        "es": "¡Hola! ¿En qué puedo ayudar?",
        "fr": "Bonjour ! Comment puis-je vous aider ?",
        "ko": "안녕하세요! 무엇을 도와드릴까요?",
        "hi": "नमस्ते! मैं कैसे मदद कर सकता हूँ?",
        "ja": "こんにちは！何をお手伝いしましょうか？",
        "zh": "你好！需要什么帮助？",
    },
    "bye": {
        "en": "Goodbye!",
        "de": "Auf Wiedersehen!",
        "es": "¡Adiós!",
        "fr": "Au revoir !",
        "ko": "안녕히 가세요!",
        "hi": "फिर मिलेंगे!",
        "ja": "さようなら！",
        "zh": "再见！",
    },
}
"""The social replies to thanks, a greeting and a goodbye, by language."""


_ABOUT_ASSISTANT = re.compile(
    r"^\W*(?:(?:so|and|ok(?:ay)?|hi|hello|hey)\W+)?(?:"
    r"what\s+(?:can|do)\s+you\s+do|what\s+are\s+you(?:\s+for)?|who\s+are\s+you|"
    r"what\s+(?:can|could|do)\s+you\s+help(?:\s+me)?\s+with|what\s+do\s+you\s+know|"
    r"how\s+(?:can|could|do)\s+you\s+help(?:\s+me)?|"
    r"what\s+(?:(?:kind|sort)\s+of\s+)?(?:questions|things|topics)\s+"
    r"(?:can\s+you\s+answer|can\s+i\s+ask(?:\s+you)?(?:\s+about)?|do\s+you\s+(?:cover|know))|"
    r"what\s+can\s+i\s+ask(?:\s+you)?(?:\s+about)?|help"
    r")\W*$",
    re.IGNORECASE,
)
"""A question about the assistant itself ("What can you do?", "Who are you?", "help")."""
ABOUT_ASSISTANT = (
    "I answer questions from the documents I have been given and cite the source of each "
    "answer, and I say so when I don't have the information. Tell me about yourself (your "
    "name, your team) and I will take it into account."
)
"""The reply to a question about the assistant (English: the documents quoted are English)."""


_ASKS_TO_FORGET = re.compile(
    r"^\W*(?:(?:please|pls|can\s+you|could\s+you|would\s+you)\W+)*"
    r"(?:forget|delete|erase|remove|wipe)\s+(?:"
    r"what\s+i\s+(?:told|said|shared)|(?:everything|all|anything)\s+(?:i|about\s+me|you\s+know)|"
    r"about\s+me|my\s+(?:data|information|info|details|memories|memory|personal)"
    r")\b",
    re.IGNORECASE,
)
"""A request to forget what the user said ("Please forget what I told you about my laptop",
"delete my data")."""
FORGET_ELSEWHERE = (
    "I can't delete memories from the chat. What I remember about you is listed on the memory "
    "dashboard (/ui), where you can forget each item."
)
"""The reply to a request to forget: where it is done (the dashboard's forget action)."""


def small_talk(text: str) -> str | None:
    """The social reply to ``text`` when it is only thanks, a greeting or a goodbye ("Thanks a
    lot!", "hi there", "danke schön", "감사합니다"), asks what the assistant is or does
    (:data:`ABOUT_ASSISTANT`) or asks it to forget (:data:`FORGET_ELSEWHERE`), else None. A
    message that asks or says anything else (a question word, any other word) is not small
    talk."""
    if _ABOUT_ASSISTANT.match(text.strip()):
        return ABOUT_ASSISTANT
    if _ASKS_TO_FORGET.match(text.strip()):
        return FORGET_ELSEWHERE
    words = [
        "".join(c for c in token if not unicodedata.category(c).startswith(("P", "S")))
        for token in text.casefold().split()
    ]
    words = [w for w in words if w]
    if not words or len(words) > 8:
        return None
    core = [_SMALL_TALK_CORE[w] for w in words if w in _SMALL_TALK_CORE]
    if not core or any(w not in _SMALL_TALK_CORE and w not in _SMALL_TALK_FILLERS for w in words):
        return None
    kind, lang = core[0]
    return SMALL_TALK_REPLIES[kind][lang]
