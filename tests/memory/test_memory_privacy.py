"""Detectors of sensitive values and redaction."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smartctx.memory.checksums import iban_ok, verhoeff_ok
from smartctx.memory.extractor import extract
from smartctx.memory.privacy import detect, is_sensitive, luhn_ok, redact


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("write to jane.doe+x@example.co.uk today", "email"),
        ("call me at +1 415-555-2671", "phone"),
        ("내 번호는 010-1234-5678 이야", "phone"),
        ("card 4111 1111 1111 1111 expires soon", "card"),
        ("ssn 123-45-6789", "ssn"),
        ("주민등록번호 900101-1234567", "rrn"),
        ("server at 10.0.0.12 is down", "ip"),
        ("ipv6 2001:db8::8a2e:370:7334 too", "ip"),
        ("my password is Tr0ub4dor&3", "secret"),
        ("비밀번호는 abc12345", "secret"),
        ("use key sk-proj1234567890abcdefABCD", "secret"),
        ("wire it to DE89 3704 0044 0532 0130 00 please", "iban"),
        ("IBAN GB82WEST12345698765432", "iban"),
        ("my aadhaar is 2345 6789 0124", "aadhaar"),
        ("aadhaar 234567890124.", "aadhaar"),
        ("my PIN is 4821", "secret"),
        ("the pin code: 004821", "secret"),
        ("핀번호는 5512", "secret"),
        ("my passphrase is correct-horse-battery", "secret"),
        ("aws AKIAIOSFODNN7EXAMPLE leaked", "secret"),
        ("push with ghp_abcdefghijklmnopqrstuvwxyz0123", "secret"),
        ("slack xoxb-1234567890-abcdefghij", "secret"),
        (
            "bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhbUJU1p1rwW1gFWF",
            "secret",
        ),
    ],
)
def test_detects(text: str, kind: str) -> None:
    found = detect(text)
    assert [f.kind for f in found] == [kind]
    assert f"[REDACTED:{kind}]" in redact(text)


def test_a_secret_right_after_its_keyword_carries_a_digit_or_a_symbol() -> None:
    assert [f.kind for f in detect("my password hunter2")] == ["secret"]
    assert [f.kind for f in detect("password: reset")] == ["secret"]  # "is", ":" or "="
    assert detect("the password policy.") == []


def test_echoes_are_redacted_unless_the_knowledge_publishes_them() -> None:
    from smartctx.memory.privacy import redact_echoes

    guide = "Report a stolen laptop to helpdesk@example.com within 24 hours."
    reply = "Write to helpdesk@example.com; you gave me jo@example.org and hunter2x."
    asked = "I am jo@example.org, my password is hunter2x"
    out = redact_echoes(reply, asked, public=[guide])
    assert "helpdesk@example.com" in out
    assert "jo@example.org" not in out and "hunter2x" not in out
    assert "helpdesk@example.com" not in redact_echoes(reply, asked)  # nothing published


def test_luhn_rejects_random_digit_runs() -> None:
    assert luhn_ok("4111111111111111")
    assert not luhn_ok("4111111111111112")
    assert detect("order 4111 1111 1111 1112 shipped") == []


@pytest.mark.parametrize(
    "text",
    [
        "transfer to DE89 3704 0044 0532 0130 01",  # IBAN with a wrong check
        "order 2345 6789 0125 shipped",  # 12 digits failing Verhoeff
        "pin the message to the top",
        "eyJ is how a JWT starts",
        "sk-short",
        "Does the password reset site need the VPN?",
        "the token expires after an hour",
        "How long must a new password be?",
    ],
)
def test_near_misses_are_not_redacted(text: str) -> None:
    assert detect(text) == []


def test_phone_after_other_digits_is_found() -> None:
    assert [f.kind for f in detect("room 2 010-1234-5678 tonight")] == ["phone"]
    assert "010-1234-5678" not in redact("room 2 010-1234-5678 tonight")


@pytest.mark.parametrize(
    "text", ["안방 청정해줘", "turn on the living room purifier at 7:30", "I like jazz", "3 rooms"]
)
def test_ordinary_text_is_untouched(text: str) -> None:
    assert redact(text) == text
    assert not is_sensitive(text)


def test_sensitive_values_are_never_extracted() -> None:
    assert extract("I like alice@example.com") == []
    assert extract(redact("나는 010-1234-5678 좋아해")) == []


def _with_luhn(body: str) -> str:
    for check in "0123456789":
        if luhn_ok(body + check):
            return body + check
    raise AssertionError("a Luhn check digit always exists")


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="0123456789", min_size=15, max_size=15), st.sampled_from([" ", "-", ""]))
def test_every_luhn_valid_card_is_redacted(body: str, sep: str) -> None:
    card = _with_luhn(body)
    shown = sep.join(card[i : i + 4] for i in range(0, 16, 4))
    out = redact(f"pay with {shown} today")
    assert card not in out.replace(sep, "") if sep else card not in out
    assert "[REDACTED:" in out


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=80))
def test_redaction_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet="0123456789", min_size=10, max_size=10), st.sampled_from("23456789"))
def test_every_verhoeff_valid_aadhaar_is_redacted(body: str, first: str) -> None:
    number = next(first + body + c for c in "0123456789" if verhoeff_ok(first + body + c))
    shown = " ".join(number[i : i + 4] for i in range(0, 12, 4))
    assert redact(f"my aadhaar {shown} ok") == "my aadhaar [REDACTED:aadhaar] ok"


def test_iban_checksum() -> None:
    assert iban_ok("DE89370400440532013000")
    assert iban_ok("NL91ABNA0417164300")
    assert not iban_ok("NL91ABNA0417164301")
    assert not iban_ok("DE8937040044")


def test_the_digits_of_an_id_are_not_a_phone_number() -> None:
    # a memory id cited in a reply ("[source: mem:caf1234567890]") came back as
    # "mem:caf[REDACTED:phone]"; a number beside a Korean particle is still one
    assert detect("[source: mem:caf1234567890]") == []
    assert redact("see pair:f7d2a5f92ba94d2da0576e9ef1383978 and id a5551234567b") == (
        "see pair:f7d2a5f92ba94d2da0576e9ef1383978 and id a5551234567b"
    )
    assert [f.kind for f in detect("내 번호는 010-1234-5678로 연락해")] == ["phone"]
    assert [f.kind for f in detect("phone:4155552671")] == ["phone"]
