"""Relative dates resolved against the day they were said; dates a question names."""

from __future__ import annotations

from datetime import date

import pytest

from smartctx.retrieval.dates import asked, label, mentions, overlap, parse_day

SAID = date(2023, 5, 8)  # a Monday


@pytest.mark.parametrize(
    ("text", "phrase", "expected"),
    [
        ("I went to a support group yesterday", "yesterday", "7 May 2023"),
        ("Last week I went to a pride parade", "Last week", "the week of 1 May 2023"),
        ("last Saturday we hiked", "last Saturday", "6 May 2023"),
        ("We went camping last weekend", "last weekend", "the weekend of 6 May 2023"),
        ("I moved here two years ago", "two years ago", "2021"),
        ("a few days ago I painted", "a few days ago", "5 May 2023"),
        ("I signed up in March", "in March", "March 2023"),
        ("in August I start school", "in August", "August 2022"),
        ("next month we fly out", "next month", "June 2023"),
        ("last year was hard", "last year", "2022"),
        ("on 1 May, 2022 I watched it", "1 May, 2022", "1 May 2022"),
        ("we met in July 2021", "July 2021", "July 2021"),
    ],
)
def test_mentions_resolve_against_the_day_said(text: str, phrase: str, expected: str) -> None:
    found = mentions(text, SAID)
    assert [m.phrase for m in found] == [phrase]
    assert label(found[0].span) == expected


def test_relative_dates_need_the_day_said_and_verbs_are_not_months() -> None:
    assert mentions("I went yesterday", None) == []
    assert mentions("this may be fun", SAID) == []
    assert [m.phrase for m in mentions("I went in 2022", None)] == ["in 2022"]


def test_asked_finds_absolute_dates_only() -> None:
    assert asked("What movie did Joanna watch on 1 May, 2022?") == [
        (date(2022, 5, 1), date(2022, 5, 1))
    ]
    assert asked("Where did Joanna travel to in July 2022?") == [
        (date(2022, 7, 1), date(2022, 7, 31))
    ]
    assert asked("What did Caroline do yesterday?") == []


def test_overlap_falls_with_the_gap() -> None:
    day = (date(2023, 5, 7), date(2023, 5, 7))
    assert overlap(day, (date(2023, 5, 1), date(2023, 5, 31))) == 1.0
    assert overlap(day, (date(2023, 5, 22), date(2023, 5, 22))) == 0.5
    assert overlap(day, (date(2023, 9, 1), date(2023, 9, 1))) < 0.15


def test_parse_day_reads_iso_times() -> None:
    assert parse_day("2023-05-08T13:56") == SAID
    assert parse_day("soon") is None
