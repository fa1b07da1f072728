"""Dates in conversation text: relative ones resolved against the day they were said, and the
dates a question asks about.

A person says "I went to a support group yesterday" on 8 May 2023; a later question asks "When did
Caroline go to the support group?" or "What did Caroline do on 7 May 2023?". :func:`mentions`
finds the date expressions of a text and resolves them against the date it was said
(``yesterday`` -> 7 May 2023, ``last week`` -> the week before, ``last Saturday`` -> the Saturday
before, ``two years ago`` -> that year, ``in May`` -> May of that year or the one before);
:func:`label` writes a resolved span the way people and questions write dates ("7 May 2023",
"the week of 1 May 2023", "May 2023", "2023"). :func:`asked` finds the absolute dates a question
names (``in May``, ``May 2023``, ``on 1 May, 2022``, ``in 2022``) as spans to match keys against.

Spans are ``(start, end)`` inclusive ``date`` pairs. Everything here is pure, offline and
deterministic; the cost is a few regular-expression scans of the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
    "a few": 3,
    "few": 3,
    "several": 3,
}
_MONTH = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_COUNT = (
    r"(\d+|a couple of|a couple|couple of|a few|few|several|an?"
    r"|one|two|three|four|five|six|seven|eight|nine|ten)"
)

Span = tuple[date, date]


@dataclass(frozen=True)
class Mention:
    """A date expression found in a text and the span of days it means."""

    phrase: str
    start: date
    end: date

    @property
    def span(self) -> Span:
        return (self.start, self.end)


def parse_day(iso: str) -> date | None:
    """The day of an ISO-8601 time (``"2023-05-08T13:56"`` -> 8 May 2023); None if it does not
    parse."""
    try:
        return date.fromisoformat(iso.strip()[:10])
    except ValueError:
        return None


def _month_number(word: str) -> int:
    word = word.lower()
    return next(i for i, name in enumerate(MONTHS, 1) if name.startswith(word[:3]))


def _month_span(year: int, month: int) -> Span:
    first = date(year, month, 1)
    nxt = date(year + month // 12, month % 12 + 1, 1)
    return first, nxt - timedelta(days=1)


def _shift_months(day: date, months: int) -> Span:
    index = day.year * 12 + day.month - 1 - months
    return _month_span(index // 12, index % 12 + 1)


def _week_of(day: date) -> Span:
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=6)


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS.get(word.lower(), 1)


def _relative(phrase: str, said: date) -> Span | None:
    p = phrase.lower()
    one = timedelta(days=1)
    if p in ("yesterday", "last night"):
        return said - one, said - one
    if p in ("today", "tonight", "this morning", "this afternoon", "this evening"):
        return said, said
    if p == "tomorrow":
        return said + one, said + one
    if p == "the day before yesterday":
        return said - 2 * one, said - 2 * one
    if p in ("last week", "the week before", "past week"):
        return _week_of(said - 7 * one)
    if p in ("this week",):
        return _week_of(said)
    if p in ("next week",):
        return _week_of(said + 7 * one)
    if p in ("last weekend", "this past weekend", "past weekend", "over the weekend"):
        saturday = said - timedelta(days=(said.weekday() - 5) % 7 or 7)
        return saturday, saturday + one
    if p in ("last month", "past month"):
        return _shift_months(said, 1)
    if p == "this month":
        return _shift_months(said, 0)
    if p == "next month":
        return _shift_months(said, -1)
    if p in ("last year", "past year"):
        return date(said.year - 1, 1, 1), date(said.year - 1, 12, 31)
    if p == "this year":
        return date(said.year, 1, 1), date(said.year, 12, 31)
    if p == "next year":
        return date(said.year + 1, 1, 1), date(said.year + 1, 12, 31)
    return None


_FIXED = re.compile(
    r"\b(the day before yesterday|yesterday|last night|today|tonight|tomorrow|"
    r"this (?:morning|afternoon|evening|week|month|year)|(?:last|next|past) (?:week|month|year)|"
    r"the week before|(?:this past|last|past|over the) weekend)\b",
    re.IGNORECASE,
)
_AGO = re.compile(rf"\b{_COUNT} (day|week|month|year)s? ago\b", re.IGNORECASE)
_LAST_WEEKDAY = re.compile(
    r"\b(?:last|this past|past|on) (monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
    re.IGNORECASE,
)
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? {_MONTH},? (\d{{4}})\b", re.IGNORECASE)
_MONTH_DAY = re.compile(rf"\b{_MONTH} (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b", re.IGNORECASE)
_MONTH_YEAR = re.compile(rf"\b{_MONTH},? (\d{{4}})\b", re.IGNORECASE)
_IN_MONTH = re.compile(rf"\b(?:in|during|since|last|this) {_MONTH}\b", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
_YEAR = re.compile(r"\b(?:in|since|during|of|by) (19\d\d|20\d\d)\b", re.IGNORECASE)


def _ago(match: re.Match[str], said: date) -> Span:
    n, unit = _count(match.group(1)), match.group(2).lower()
    if unit == "day":
        day = said - timedelta(days=n)
        return day, day
    if unit == "week":
        return _week_of(said - timedelta(days=7 * n))
    if unit == "month":
        return _shift_months(said, n)
    return date(said.year - n, 1, 1), date(said.year - n, 12, 31)


def _absolute(text: str, said: date | None) -> list[Mention]:
    out: list[Mention] = []
    taken: list[tuple[int, int]] = []

    def add(m: re.Match[str], span: Span) -> None:
        if any(a < m.end() and m.start() < b for a, b in taken):
            return
        taken.append((m.start(), m.end()))
        out.append(Mention(m.group(0), *span))

    digits = _DIGIT.search(text) is not None  # every pattern but "in <month>" needs a number
    for m in _DAY_MONTH.finditer(text) if digits else ():
        day = _safe_date(int(m.group(3)), _month_number(m.group(2)), int(m.group(1)))
        if day is not None:
            add(m, (day, day))
    for m in _MONTH_DAY.finditer(text) if digits else ():
        day = _safe_date(int(m.group(3)), _month_number(m.group(1)), int(m.group(2)))
        if day is not None:
            add(m, (day, day))
    for m in _MONTH_YEAR.finditer(text) if digits else ():
        add(m, _month_span(int(m.group(2)), _month_number(m.group(1))))
    for m in _IN_MONTH.finditer(text):
        if m.group(1).lower() == "may" and not m.group(0).lower().startswith(("in ", "during ")):
            continue  # "this may" is a verb far more often than a month
        month = _month_number(m.group(1))
        if said is None:
            continue
        year = said.year if month <= said.month else said.year - 1
        add(m, _month_span(year, month))
    for m in _YEAR.finditer(text) if digits else ():
        year = int(m.group(1))
        add(m, (date(year, 1, 1), date(year, 12, 31)))
    return out


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def mentions(text: str, said: date | None) -> list[Mention]:
    """The date expressions of ``text`` said on ``said``, resolved, in order of appearance.

    Relative expressions need ``said``; absolute ones ("1 May 2022", "May 2023", "in 2022") do
    not. A month without a year ("in May") is the latest such month not after ``said``."""
    found: list[tuple[int, Mention]] = []
    if said is not None:
        for m in _FIXED.finditer(text):
            span = _relative(m.group(1), said)
            if span is not None:
                found.append((m.start(), Mention(m.group(0), *span)))
        for m in _AGO.finditer(text):
            found.append((m.start(), Mention(m.group(0), *_ago(m, said))))
        for m in _LAST_WEEKDAY.finditer(text):
            target = WEEKDAYS.index(m.group(1).lower())
            back = (said.weekday() - target) % 7 or 7
            day = said - timedelta(days=back)
            found.append((m.start(), Mention(m.group(0), day, day)))
    for mention in _absolute(text, said):
        found.append((text.find(mention.phrase), mention))
    return [m for _, m in sorted(found, key=lambda pair: pair[0])]


def asked(question: str, today: date | None = None) -> list[Span]:
    """The absolute dates ``question`` names, as spans (relative ones resolve against
    ``today`` when given)."""
    if today is None and _YEAR_DIGITS.search(question) is None:
        return []  # without today only mentions with a year count, and there is none (every turn)
    return [m.span for m in mentions(question, today) if today is not None or _is_absolute(m)]


_YEAR_DIGITS = re.compile(r"\d{4}")


def _is_absolute(mention: Mention) -> bool:
    return _YEAR_DIGITS.search(mention.phrase) is not None


def label(span: Span) -> str:
    """A span written as people write dates: a day, a week, a month or a year."""
    start, end = span
    if start == end:
        return f"{start.day} {MONTHS[start.month - 1].title()} {start.year}"
    if (start.month, start.day, end.month, end.day) == (1, 1, 12, 31) and start.year == end.year:
        return str(start.year)
    if start.day == 1 and (end + timedelta(days=1)).day == 1 and start.month == end.month:
        return f"{MONTHS[start.month - 1].title()} {start.year}"
    if (end - start).days == 1 and start.weekday() == 5:
        return f"the weekend of {label((start, start))}"
    if (end - start).days <= 7:
        return f"the week of {label((start, start))}"
    return f"{label((start, start))} to {label((end, end))}"


def overlap(a: Span, b: Span) -> float:
    """How well two spans agree: 1 when they share a day, falling with the gap in days between
    them (0.5 at 15 days, about 0.1 at four months)."""
    if a[0] <= b[1] and b[0] <= a[1]:
        return 1.0
    gap = (b[0] - a[1]).days if a[1] < b[0] else (a[0] - b[1]).days
    return 15.0 / (15.0 + gap)
