"""Short set phrases that mean the same in any language: "Hello" is "您好" is "안녕하세요".

Semantic admission compares embeddings, and for whole sentences a multilingual embedder carries
meaning across languages ("How do I connect to the VPN?" and "VPN에 어떻게 연결하나요?" score
0.96 with USE). For one- or two-word formulas it does not: "Hello" / "您好" score 0.51 while
"Hello" / "谢谢" ("thanks") score 0.58, so no threshold separates them. Greetings, thanks and
farewells are a closed class, so they are matched by meaning through this table instead: a
message that is only such a formula (punctuation aside) gets the formula's canonical name as
its exact-duplicate key, so "Hello" and "您好" merge while "Hello" and "谢谢" never do. The
numbers/negation guard is untouched: no formula carries a number or a negation.
"""

from __future__ import annotations

import re
import unicodedata

_FORMULAS: dict[str, tuple[str, ...]] = {
    "hello": (
        "hello", "hi", "hey", "good day", "您好", "你好", "안녕하세요", "안녕", "こんにちは",
        "नमस्ते", "hola", "bonjour", "salut", "hallo", "guten tag", "ciao", "olá", "ola",
        "привет", "здравствуйте", "مرحبا", "merhaba", "xin chào", "สวัสดี",
    ),
    "thank you": (
        "thank you", "thanks", "thank you very much", "thanks a lot", "谢谢", "謝謝", "감사합니다",
        "고맙습니다", "ありがとう", "ありがとうございます", "धन्यवाद", "शुक्रिया", "gracias",
        "merci", "danke", "danke schön", "grazie", "obrigado", "obrigada", "спасибо", "شكرا",
    ),
    "goodbye": (
        "goodbye", "bye", "see you", "再见", "안녕히 계세요", "안녕히 가세요", "さようなら",
        "अलविदा", "adiós", "adios", "au revoir", "auf wiedersehen", "tschüss", "arrivederci",
        "до свидания",
    ),
    "good morning": (
        "good morning", "早上好", "早安", "좋은 아침", "おはよう", "おはようございます",
        "सुप्रभात", "buenos días", "buenos dias", "guten morgen", "buongiorno",
    ),
}  # fmt: skip
_STRIP = re.compile(r"[\s\W_]+$|^[\s\W_]+", re.UNICODE)


def _fold(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_STRIP.sub("", folded).split())


_CANONICAL: dict[str, str] = {_fold(p): name for name, ps in _FORMULAS.items() for p in ps}


def canonical_phrase(text: str) -> str | None:
    """The canonical name of ``text`` when it is only a greeting, thanks or farewell formula
    (``"Hello!"`` and ``"您好"`` -> ``"hello"``), else ``None``."""
    return _CANONICAL.get(_fold(text))
