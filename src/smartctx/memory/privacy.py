"""Detectors of sensitive values and the redaction applied before anything is summarised.

Detected kinds: ``email``, ``phone`` (the ``phonenumbers`` library, international numbers and
numbers of the configured regions, default US and KR), ``card`` (13-19 digits passing the Luhn
check), ``ssn`` (US social security numbers), ``rrn`` (Korean resident registration numbers),
``ip`` (IPv4 and IPv6 addresses) and ``secret`` (API-key-like tokens and whatever follows
"password"/"비밀번호"/"token"/"api key"). ``redact(text)`` replaces each finding with
``[REDACTED:<kind>]``; it is pure and deterministic. A text that still contains a placeholder is
never promoted to a profile item (``is_sensitive``).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

import phonenumbers

PLACEHOLDER = re.compile(r"\[REDACTED:[a-z]+\]")

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
_SSN = re.compile(r"(?<!\d)(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?!\d)")
_RRN = re.compile(r"(?<!\d)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])-?[1-8]\d{6}(?!\d)")
_IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])")
_IPV6 = re.compile(r"(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![0-9A-Fa-f:])")
_SECRET_AFTER = re.compile(
    r"(?i)(\b(?:password|passwd|pwd|passcode|api[ _-]?key|secret|token)\b|비밀번호|암호)"
    r"(\s*(?:is|=|:|는|은|이|가)\s*|\s+)(\S+)"
)
_KEY_LIKE = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|ghp_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|xox[bap]-[A-Za-z0-9-]{10,}"
    r"|AIza[0-9A-Za-z_-]{30,})\b"
)


@dataclass(frozen=True, slots=True)
class Finding:
    """One sensitive value: its kind and the [start, end) span in the scanned text."""

    kind: str
    start: int
    end: int


def luhn_ok(digits: str) -> bool:
    """True when ``digits`` (digits only) passes the Luhn checksum."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _cards(text: str) -> Iterable[Finding]:
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and luhn_ok(digits):
            yield Finding("card", m.start(), m.end())


def _ips(text: str) -> Iterable[Finding]:
    for pattern in (_IPV4, _IPV6):
        for m in pattern.finditer(text):
            try:
                ipaddress.ip_address(m.group())
            except ValueError:
                continue
            yield Finding("ip", m.start(), m.end())


def _phones(text: str, regions: tuple[str, ...]) -> Iterable[Finding]:
    for region in regions:
        for match in phonenumbers.PhoneNumberMatcher(text, region):
            if phonenumbers.is_valid_number(match.number):
                yield Finding("phone", match.start, match.end)


def _regex(kind: str, pattern: re.Pattern[str], text: str) -> Iterable[Finding]:
    for m in pattern.finditer(text):
        yield Finding(kind, m.start(), m.end())


def _secrets(text: str) -> Iterable[Finding]:
    for m in _SECRET_AFTER.finditer(text):
        yield Finding("secret", m.start(3), m.end(3))
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


def redact(text: str, *, regions: tuple[str, ...] = ("US", "KR")) -> str:
    """``text`` with every finding of :func:`detect` replaced by ``[REDACTED:<kind>]``."""
    out: list[str] = []
    last = 0
    for f in detect(text, regions=regions):
        out.append(text[last : f.start])
        out.append(f"[REDACTED:{f.kind}]")
        last = f.end
    out.append(text[last:])
    return "".join(out)


def is_sensitive(text: str) -> bool:
    """True when ``text`` holds a sensitive value or a redaction placeholder."""
    return bool(PLACEHOLDER.search(text)) or bool(detect(text))


__all__ = ["PLACEHOLDER", "Finding", "detect", "is_sensitive", "luhn_ok", "redact"]
