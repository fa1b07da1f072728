"""Detectors of sensitive values and the redaction applied before anything is summarised.

Detected kinds: ``email``, ``phone`` (the ``phonenumbers`` library, international numbers and
numbers of the configured regions, default US and KR), ``card`` (13-19 digits passing the Luhn
check), ``ssn`` (US social security numbers), ``rrn`` (Korean resident registration numbers),
``aadhaar`` (Indian Aadhaar numbers, 12 digits passing the Verhoeff check), ``iban`` (passing
the mod-97 check), ``ip`` (IPv4 and IPv6 addresses) and ``secret`` (API-key shapes: ``sk-...``,
``AKIA...``, ``ghp_...``, Slack and Google keys, JWT-looking tokens; whatever follows
"password"/"passphrase"/"비밀번호"/"token"/"api key"; the digits of a PIN phrase such as
"my PIN is 4821"). ``redact(text)`` replaces each finding with ``[REDACTED:<kind>]``; it is pure
and deterministic. A text that still contains a placeholder is never promoted to a profile item
(``is_sensitive``).

Cost: linear in the length of the text. Every pattern either starts with a literal anchor or
can only start where a run of its characters begins (a look-behind), and every repetition after
that is bounded, so no pattern re-scans a long run from each of its positions. Phone numbers are
phone-shaped candidates of bounded length, and at most ``_PHONE_CHECKS`` are validated per text.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import phonenumbers

from smartctx.memory.checksums import iban_ok, luhn_ok, verhoeff_ok

PLACEHOLDER = re.compile(r"\[REDACTED:[a-z]+\]")

_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}"
    r"\.[A-Za-z]{2,24}(?![A-Za-z0-9-])"
)
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
_SSN = re.compile(r"(?<!\d)(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?!\d)")
_RRN = re.compile(r"(?<!\d)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])-?[1-8]\d{6}(?!\d)")
_AADHAAR = re.compile(r"(?<![\d-])[2-9]\d{3}([ -]?)\d{4}\1\d{4}(?![\d-])")
_IBAN = re.compile(
    r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![A-Za-z0-9])"
)
_IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])")
_IPV6 = re.compile(r"(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![0-9A-Fa-f:])")
_SECRET_AFTER = re.compile(
    r"(?i)(\b(?:password|passwd|passphrase|pwd|passcode|api[ _-]?key|secret|token)\b|비밀번호|암호)"
    r"(\s*(?:is|=|:|는|은|이|가)\s*|\s+)(\S{1,256})"
)
_PIN = re.compile(
    r"(?i)(?:\bpin(?:[ _-]?(?:code|number))?\b|\bcvv\b|\bcvc\b|\botp\b|핀\s*번호)"
    r"(?:\s*(?:is|=|:|는|은)\s*|\s+)(\d{3,8})(?!\d)"
)
_KEY_CHARS = r"[A-Za-z0-9_-]"
_KEY_LIKE = re.compile(
    rf"(?<!{_KEY_CHARS})(?:sk-(?:proj-|live-|test-)?{_KEY_CHARS}{{16,256}}"
    r"|gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{20,255}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}|xox[bapr]-[A-Za-z0-9-]{10,255}|AIza[0-9A-Za-z_-]{30,255}"
    rf"|eyJ{_KEY_CHARS}{{8,4096}}\.eyJ{_KEY_CHARS}{{4,8192}}\.{_KEY_CHARS}{{8,4096}})"
    rf"(?!{_KEY_CHARS})"
)
_PHONE = re.compile(
    # never glued to Latin letters or digits: the digits of an id ("mem:caf1234567890") are not
    # a number; a Korean particle may follow one ("010-1234-5678로")
    r"(?<![0-9A-Za-z+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{1,4}){1,5}"
    r"(?![0-9A-Za-z])"
)
_GAP = re.compile(r"[ .-]")
_PHONE_CHECKS = 200


@dataclass(frozen=True, slots=True)
class Finding:
    """One sensitive value: its kind and the [start, end) span in the scanned text."""

    kind: str
    start: int
    end: int


def _cards(text: str) -> Iterable[Finding]:
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and luhn_ok(digits):
            yield Finding("card", m.start(), m.end())


def _aadhaar(text: str) -> Iterable[Finding]:
    for m in _AADHAAR.finditer(text):
        if verhoeff_ok(re.sub(r"\D", "", m.group())):
            yield Finding("aadhaar", m.start(), m.end())


def _ibans(text: str) -> Iterable[Finding]:
    for m in _IBAN.finditer(text):
        if iban_ok(m.group().replace(" ", "")):
            yield Finding("iban", m.start(), m.end())


def _ips(text: str) -> Iterable[Finding]:
    for pattern in (_IPV4, _IPV6):
        for m in pattern.finditer(text):
            try:
                ipaddress.ip_address(m.group())
            except ValueError:
                continue
            yield Finding("ip", m.start(), m.end())


def _valid_phone(candidate: str, regions: tuple[str, ...]) -> bool:
    for region in regions:
        try:
            number = phonenumbers.parse(candidate, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number(number):
            return True
    return False


def _phones(text: str, regions: tuple[str, ...]) -> Iterable[Finding]:
    """Phone-shaped candidates that ``phonenumbers`` validates for one of ``regions``.

    A candidate that fails is retried without its leading digit groups (``"in 2 010-1234-5678"``).
    Validation costs about 0.1 ms, so after ``_PHONE_CHECKS`` of them in one text the remaining
    candidates are reported unchecked: a text made of thousands of digit groups is redacted
    rather than slow (fail closed).
    """
    budget = _PHONE_CHECKS
    for m in _PHONE.finditer(text):
        digits = sum(ch.isdigit() for ch in m.group())
        if not 7 <= digits <= 15:
            continue
        starts = [m.start()] + [g.end() for g in _GAP.finditer(m.group())]
        for start in starts[:4]:
            start = start if start == m.start() else m.start() + start
            candidate = text[start : m.end()]
            if sum(ch.isdigit() for ch in candidate) < 7:
                break
            budget -= 1
            if budget < 0 or _valid_phone(candidate, regions):
                yield Finding("phone", start, m.end())
                break


def _regex(kind: str, pattern: re.Pattern[str], text: str, group: int = 0) -> Iterable[Finding]:
    for m in pattern.finditer(text):
        yield Finding(kind, m.start(group), m.end(group))


_TRAILING = ".,;:!?)]}\"'"


def _secrets(text: str) -> Iterable[Finding]:
    for m in _SECRET_AFTER.finditer(text):
        if not m.group(2).strip() and m.group(3).rstrip(_TRAILING).isalpha():
            # "password reset", "token expiry", "secret santa": a plain word right after the
            # keyword names what it is about; a secret follows "is", ":" or "=", or carries a
            # digit or a symbol ("password hunter2")
            continue
        yield Finding("secret", m.start(3), m.end(3))
    yield from _regex("secret", _PIN, text, group=1)
    yield from _regex("secret", _KEY_LIKE, text)


def detect(text: str, *, regions: tuple[str, ...] = ("US", "KR")) -> list[Finding]:
    """Every sensitive span of ``text``, sorted, overlaps merged (the earlier, longer one wins).

    Identity numbers and cards are checked before phone numbers, so that an SSN or a card is
    reported as such rather than as a phone number.
    """
    found: list[Finding] = []
    found += _regex("email", _EMAIL, text)
    found += _regex("rrn", _RRN, text)
    found += _regex("ssn", _SSN, text)
    found += _cards(text)
    found += _aadhaar(text)
    found += _ibans(text)
    found += _secrets(text)
    found += _ips(text)
    found += _phones(text, regions)
    found.sort(key=lambda f: (f.start, -(f.end - f.start)))
    merged: list[Finding] = []
    for f in found:
        if merged and f.start < merged[-1].end:
            continue
        merged.append(f)
    return merged


_CACHED_CHARS = 2000
"""Texts up to this length keep their redaction in a cache: remembered items are redacted again
every turn they are read."""


def redact(text: str, *, regions: tuple[str, ...] = ("US", "KR")) -> str:
    """``text`` with every finding of :func:`detect` replaced by ``[REDACTED:<kind>]``."""
    if len(text) <= _CACHED_CHARS:
        return _redact_cached(text, regions)
    return _redact(text, regions)


@functools.lru_cache(maxsize=4096)
def _redact_cached(text: str, regions: tuple[str, ...]) -> str:
    return _redact(text, regions)


def _redact(text: str, regions: tuple[str, ...]) -> str:
    return _replaced(text, detect(text, regions=regions))


def _replaced(text: str, findings: Iterable[Finding]) -> str:
    """``text`` with each of ``findings`` (sorted, not overlapping) replaced by its placeholder."""
    out: list[str] = []
    last = 0
    for f in findings:
        out.append(text[last : f.start])
        out.append(f"[REDACTED:{f.kind}]")
        last = f.end
    out.append(text[last:])
    return "".join(out)


def private_findings(
    text: str, public: Sequence[str], *, regions: tuple[str, ...] = ("US", "KR")
) -> list[Finding]:
    """The findings of :func:`detect` in ``text`` whose value none of the ``public`` texts
    holds (what a knowledge base publishes, a helpdesk address, is no one's secret)."""
    return [
        f
        for f in detect(text, regions=regions)
        if not any(text[f.start : f.end] in p for p in public)
    ]


def redact_echoes(
    text: str,
    source: str,
    *,
    public: Iterable[str] = (),
    regions: tuple[str, ...] = ("US", "KR"),
) -> str:
    """``text`` redacted, and also cleared of every sensitive value found in ``source`` (a reply
    that repeats the user's password without the word "password" still loses it).

    A value found verbatim in one of the ``public`` texts (the knowledge-base passages the reply
    answers from: "write to helpdesk@example.com") is published, not personal: it stays."""
    published = [p for p in public if p]
    if not published:
        out = redact(text, regions=regions)
    else:
        out = _replaced(text, private_findings(text, published, regions=regions))
    for f in private_findings(source, published, regions=regions):
        value = source[f.start : f.end]
        if len(value) >= 4:
            out = out.replace(value, f"[REDACTED:{f.kind}]")
    return out


def is_sensitive(text: str) -> bool:
    """True when ``text`` holds a sensitive value or a redaction placeholder."""
    return bool(PLACEHOLDER.search(text)) or bool(detect(text))


__all__ = [
    "PLACEHOLDER",
    "Finding",
    "detect",
    "is_sensitive",
    "luhn_ok",
    "private_findings",
    "redact",
    "redact_echoes",
]
