"""Which turns are worth remembering, and which remembered rows are not worth recalling.

A memory that comes back in a later thread must help answer something. Not worth it:

- **abstentions and refusals** ("I don't have that information.", "I can't say that ..."): an
  empty answer recalled later only teaches the model to give up again;
- **failed turns and errors** ("internal_error: ...", "upstream_error: ...", tracebacks);
- **scaffolding and raw JSON** ("Current request (required; ...", ``"route_family": ...``,
  ``[tool: ...]``): prompt plumbing that leaked into a reply must not leak again;
- **chit-chat**: a user message made only of greetings, thanks and filler words, with no number
  ("Thanks!", "ok", "Hello there, how are you?", "안녕하세요", "您好").

:func:`junk_reason` says why a turn is not worth remembering (``None`` when it is); the
personal-memory hook skips such turns when storing and filters older rows the same way when
recalling. Pure string checks, linear in the text.
"""

from __future__ import annotations

import re
from functools import lru_cache

_ABSTAIN = re.compile(
    r"i\s+(?:don['’]t|do\s+not)\s+(?:have\s+that\s+information|know)|"
    r"i\s+can['’]?not\s+(?:say|help)|i\s+can['’]t\s+say\s+that|not\s+allowed\s+to\s+say|"
    r"i\s+won['’]t\s+repeat|keine\s+informationen|no\s+tengo\s+esa\s+informaci|"
    r"정보는\s*가지고\s*있지\s*않|^\s*no\.?\s*$|^\s*\.\.\.\s*$",
    re.IGNORECASE,
)
_ERROR = re.compile(
    r"^\s*(?:internal_error|upstream_error|invalid_input|budget_exceeded|conflict|not_found)\b|"
    r"traceback \(most recent call last\)|\bfailed:\s+\w+error\b",
    re.IGNORECASE,
)
_SCAFFOLDING = re.compile(
    r"current\s+request\s*\(|memory\s+context\s*\(|\"[a-z_]+\"\s*:|\[tool:|\[recalled from:|"
    r"earlier turn\.\s*user:|^\s*[\[{]",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_FILLER = frozenset(
    [
        "hi",
        "hello",
        "hey",
        "thanks",
        "thank",
        "you",
        "ok",
        "okay",
        "yes",
        "no",
        "sure",
        "great",
        "good",
        "morning",
        "evening",
        "night",
        "bye",
        "cheers",
        "please",
        "well",
        "fine",
        "cool",
        "nice",
        "the",
        "a",
        "an",
        "is",
        "are",
        "am",
        "i",
        "me",
        "my",
        "it",
        "this",
        "that",
        "so",
        "and",
        "or",
        "to",
        "of",
        "how",
        "there",
        "today",
        "friend",
        "again",
        "all",
        "for",
        "your",
        "be",
        "doing",
        "what's",
        "up",
        "do",
        "안녕하세요",
        "안녕",
        "감사합니다",
        "고맙습니다",
        "您好",
        "你好",
        "谢谢",
        "नमस्ते",
        "धन्यवाद",
        "danke",
        "hallo",
        "gracias",
        "hola",
        "merci",
        "bonjour",
    ]
)


def is_chit_chat(text: str) -> bool:
    """True for a short social message with no content (and no number)."""
    if re.search(r"\d", text):
        return False
    words = [w.casefold() for w in _WORD.findall(text)]
    return all(w in _FILLER for w in words)


@lru_cache(maxsize=4096)
def junk_reason(user_text: str, assistant_text: str) -> str | None:
    """Why the turn ``(user_text, assistant_text)`` is not worth remembering, or ``None``.

    Kept for the last 4,096 turns asked about: a served turn judges the owner's recent pairs
    again every turn (about 0.4 ms of pattern searches for twenty pairs)."""
    if not user_text.strip():
        return "empty"
    for label, pattern in (("error", _ERROR), ("scaffolding", _SCAFFOLDING)):
        if pattern.search(user_text) or pattern.search(assistant_text):
            return label
    if assistant_text.strip() and _ABSTAIN.search(assistant_text):
        return "abstention"
    if is_chit_chat(user_text):
        return "chit-chat"
    return None


def is_junk_text(text: str) -> bool:
    """True when one remembered text (a summary, an item) is scaffolding, an error or an
    abstention."""
    return bool(_SCAFFOLDING.search(text) or _ERROR.search(text) or _ABSTAIN.search(text))
