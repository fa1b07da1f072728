"""Retrieval keys from the memory tiers: facts, session summaries and entities, each pointing back
to the turns it rests on.

A turn says "I went to a LGBTQ support group yesterday"; the question asks "When did Caroline go
to the LGBTQ support group?". The turn alone names neither Caroline nor a date. The keys here say
what the tiers know about it, in the words a question uses, and carry the turn ids
(``provenance``) a hit on them brings back:

- **fact** (one per turn): the turn in the third person ("I" -> the speaker, "you" -> the person
  spoken to), with its relative dates resolved against the session's day ("yesterday (7 May
  2023)"), dated by the first date it names, else by the day it was said;
- **session** (one per session, or per day when turns carry no session): an extractive summary
  (the session's day, its speakers and the sentences richest in names and rare words), dated by
  that day, pointing to every turn of the session;
- **entity** (one per person, place or thing named with a capital letter mid-sentence, other than
  the speakers): the name and the sentences that mention it, pointing to those turns.

Turns are slots with ``metadata["speaker"]``, ``metadata["time"]`` (ISO-8601) and optionally
``metadata["session"]``; slots are given in conversation order. Extraction is pure, offline and
deterministic, linear in the text; :class:`KeyExtractor` is the protocol an LLM-backed extractor
(:mod:`smartctx.retrieval.keys_llm`) also implements. :class:`KeyTable` holds indexed keys as
arrays, so ranking reads their kinds, provenance and dates without a loop over every key.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from functools import partial
from typing import Protocol

import numpy as np
import numpy.typing as npt

from smartctx.core.slots import Slot
from smartctx.retrieval.analysis import analyze
from smartctx.retrieval.dates import MONTHS, WEEKDAYS, Span, label, mentions, parse_day

KINDS = ("fact", "session", "entity")


@dataclass(frozen=True)
class TierKey:
    """A retrieval key: ``text`` is what search matches, ``provenance`` the slot ids a hit brings,
    ``span`` the days it is about (None when unknown)."""

    id: str
    kind: str
    text: str
    provenance: tuple[str, ...]
    span: Span | None = None


class KeyExtractor(Protocol):
    """Turns one session's slots (in order) into fact keys; deterministic for the same input."""

    def facts(self, session: Sequence[Slot]) -> list[TierKey]: ...


def session_of(slot: Slot) -> str:
    """The group a turn belongs to: its session number, else its day, else ``"-"``."""
    session = slot.metadata.get("session")
    if session is not None and str(session) != "":
        return f"s{session}"
    when = str(slot.metadata.get("time") or slot.created_at or "")
    return when[:10] or "-"


def day_of(slot: Slot) -> date | None:
    return parse_day(str(slot.metadata.get("time") or slot.created_at or ""))


def speaker_of(slot: Slot) -> str:
    return str(slot.metadata.get("speaker") or "").strip()


_FIRST = [
    (re.compile(r"\bI'm\b|\bI am\b"), "{s} is"),
    (re.compile(r"\bI've\b"), "{s} has"),
    (re.compile(r"\bI'll\b"), "{s} will"),
    (re.compile(r"\bI'd\b"), "{s} would"),
    (re.compile(r"\bI was\b"), "{s} was"),
    (re.compile(r"\bI\b"), "{s}"),
    (re.compile(r"\b[Mm]yself\b"), "{s}"),
    (re.compile(r"\b[Mm]y\b"), "{s}'s"),
    (re.compile(r"\b[Mm]ine\b"), "{s}'s"),
    (re.compile(r"\b[Mm]e\b"), "{s}"),
]
_SECOND = [
    (re.compile(r"\b[Yy]ou're\b|\b[Yy]ou are\b"), "{a} is"),
    (re.compile(r"\b[Yy]ou've\b"), "{a} has"),
    (re.compile(r"\b[Yy]our\b"), "{a}'s"),
    (re.compile(r"\b[Yy]ours\b"), "{a}'s"),
    (re.compile(r"\b[Yy]ou\b"), "{a}"),
]


def first_person(query: str, speakers: Iterable[str]) -> str:
    """``query`` as the speakers it names would say it: "What activities does Melanie partake
    in?" -> "What activities do I partake in?", "What do Melanie's kids like?" -> "What do my
    kids like?" (a speaker is named by the first word of their name). A conversation's turns
    say what their speakers do in the first person, so it is this form whose embedding is near
    them; a query naming no speaker is returned as it is."""
    out = query
    for speaker in speakers:
        name = speaker.split()[0] if speaker.split() else ""
        if len(name) < 2 or not name[0].isupper() or name not in out:
            continue
        n = re.escape(name)
        for pattern, repl in (
            (rf"\b{n}['’]s\b", "my"),
            (rf"\b(?i:does|do)\s+{n}\b", "do I"),
            (rf"\b(?i:did)\s+{n}\b", "did I"),
            (rf"\b(?i:is)\s+{n}\b", "am I"),
            (rf"\b(?i:has)\s+{n}\b", "have I"),
            (rf"\b(?i:was)\s+{n}\b", "was I"),
            (rf"\b{n}\b", "I"),
        ):
            # a verb keeps its capital ("Does Melanie" -> "Do I"), a name's does not matter
            out = re.sub(pattern, partial(_as_cased, repl) if " " in repl else repl, out)
    return out


def _as_cased(replacement: str, match: re.Match[str]) -> str:
    """``replacement`` capitalised as the text it replaces ("Does Melanie" -> "Do I")."""
    return (
        replacement[:1].upper() + replacement[1:] if match.group(0)[:1].isupper() else replacement
    )


def third_person(text: str, speaker: str, addressee: str) -> str:
    """``text`` with first-person words replaced by ``speaker`` and second-person ones by
    ``addressee`` (each left alone when empty)."""
    out = text
    if speaker:
        for pattern, repl in _FIRST:
            out = pattern.sub(repl.format(s=speaker), out)
    if addressee:
        for pattern, repl in _SECOND:
            out = pattern.sub(repl.format(a=addressee), out)
    return out


def _addressee(session: Sequence[Slot], i: int) -> str:
    me = speaker_of(session[i])
    for j in (i - 1, i + 1, i - 2, i + 2):
        if 0 <= j < len(session) and speaker_of(session[j]) not in ("", me):
            return speaker_of(session[j])
    return ""


def _dated(text: str, said: date | None) -> tuple[str, Span | None]:
    found = mentions(text, said)
    for m in found:
        text = text.replace(m.phrase, f"{m.phrase} ({label(m.span)})", 1)
    span = found[0].span if found else ((said, said) if said is not None else None)
    return text, span


class OfflineExtractor:
    """Fact keys without a model: each turn in the third person with its dates resolved."""

    def facts(self, session: Sequence[Slot]) -> list[TierKey]:
        out: list[TierKey] = []
        for i, slot in enumerate(session):
            said = day_of(slot)
            text = third_person(slot.text.strip(), speaker_of(slot), _addressee(session, i))
            caption = str(slot.metadata.get("caption") or "").strip()
            if caption:
                text = f"{text} [{speaker_of(slot) or 'someone'} shares a photo: {caption}]"
            text, span = _dated(text, said)
            if said is not None:
                text = f"{text} (said on {label((said, said))})"
            out.append(TierKey(f"fact:{slot.id}", "fact", text, (slot.id,), span))
        return out


_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_CAPITAL = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-zA-Z'\-]+(?:\s+[A-Z][a-zA-Z'\-]+)*)")
_NOT_NAMES = {m.title() for m in MONTHS + WEEKDAYS} | {
    "I",
    "I'm",
    "I've",
    "I'll",
    "I'd",
    "Hey",
    "Hi",
    "Oh",
    "Wow",
    "Thanks",
    "Yes",
    "Yeah",
    "No",
    "OK",
    "Ok",
    "Haha",
    "Congrats",
    "Omg",
    "LOL",
}


def names(text: str, speakers: frozenset[str] = frozenset()) -> list[str]:
    """Capitalised names in ``text`` not at a sentence start (people, places, titles), minus the
    ``speakers`` and common words; in order, each once."""
    found: list[str] = []
    for match in _CAPITAL.finditer(text):
        words = [w for w in match.group(1).split() if w not in _NOT_NAMES]
        name = " ".join(words).strip("'-")
        if len(name) < 2 or name in speakers or name.split("'")[0] in speakers:
            continue
        if name not in found:
            found.append(name)
    return found


def session_keys(
    sessions: dict[str, list[Slot]],
    *,
    sentences: int = 6,
    speakers: frozenset[str] = frozenset(),
    df: Counter[str] | None = None,
) -> list[TierKey]:
    """One extractive summary key per session (see the module doc). ``df`` counts the turns each
    term occurs in over the whole history (default: over ``sessions``)."""
    if df is None:
        df = Counter()
        for turns in sessions.values():
            for slot in turns:
                df.update(set(analyze(slot.text)))
    n = max(1, max(df.values(), default=1))
    out: list[TierKey] = []
    for group, turns in sessions.items():
        said = next((d for s in turns if (d := day_of(s)) is not None), None)
        scored: list[tuple[float, int, str]] = []
        for index, slot in enumerate(turns):
            for sentence in _SENTENCE.split(slot.text.strip()):
                terms = set(analyze(sentence))
                if len(terms) < 3:
                    continue
                weight = sum(math.log(1 + n / max(1, df[t])) for t in terms) / math.sqrt(len(terms))
                weight += 0.5 * len(names(sentence, speakers))
                text = f"{speaker_of(slot)}: {sentence}" if speaker_of(slot) else sentence
                scored.append((weight, index, text))
        best = sorted(scored, key=lambda x: (-x[0], x[1]))[:sentences]
        people = sorted({speaker_of(s) for s in turns if speaker_of(s)})
        head = " and ".join(people) + (f" on {label((said, said))}" if said else "")
        body = " ".join(text for _, _, text in sorted(best, key=lambda x: x[1]))
        span = (said, said) if said is not None else None
        out.append(
            TierKey(
                f"session:{group}", "session", f"{head}. {body}", tuple(s.id for s in turns), span
            )
        )
    return out


class Entities:
    """The names mentioned so far, with the turns that mention each, its first ``sentences``
    sentences and the span of days of its mentions; grows a turn at a time (cost: the new
    turns' text; a name mentioned in every turn does not make a turn dearer to date)."""

    def __init__(self, sentences: int = 6) -> None:
        self.sentences = sentences
        self.where: dict[str, list[Slot]] = defaultdict(list)
        self.said: dict[str, list[str]] = defaultdict(list)
        self.span: dict[str, tuple[date, date]] = {}

    def add(self, turns: Sequence[Slot], speakers: frozenset[str]) -> list[str]:
        """Note the names in ``turns``; returns those touched, in order of mention, each once."""
        touched: dict[str, None] = {}
        for slot in turns:
            who = speaker_of(slot)
            dated: list[date | None] = []  # the slot's day, read once if it names anything
            for sentence in _SENTENCE.split(slot.text.strip()):
                for name in names(sentence, speakers):
                    where = self.where[name]
                    if not where or where[-1].id != slot.id:
                        where.append(slot)
                        if not dated:
                            dated.append(day_of(slot))
                        self._widen(name, dated[0])
                    if len(self.said[name]) < self.sentences:
                        self.said[name].append(f"{who}: {sentence}" if who else sentence)
                    touched[name] = None
        return list(touched)

    def _widen(self, name: str, day: date | None) -> None:
        if day is None:
            return
        first, last = self.span.get(name, (day, day))
        self.span[name] = (min(first, day), max(last, day))

    def forget(self, slot_ids: set[str]) -> None:
        """Drop these turns from every name (a name left with none is dropped)."""
        for name in list(self.where):
            kept = [s for s in self.where[name] if s.id not in slot_ids]
            if len(kept) == len(self.where[name]):
                continue
            self.where[name] = kept
            self.span.pop(name, None)
            if not kept:
                del self.where[name]
                self.said.pop(name, None)
                continue
            for slot in kept:
                self._widen(name, day_of(slot))

    def key(self, name: str) -> TierKey:
        """The key of ``name``: the name and its first sentences, dated by first and last
        mention, pointing to every turn that mentions it."""
        slots = self.where[name]
        text = f"{name}. " + " ".join(self.said[name])
        ids = tuple(s.id for s in slots)
        return TierKey(f"entity:{name}", "entity", text, ids, self.span.get(name))


def entity_keys(
    turns: Sequence[Slot], *, speakers: frozenset[str] = frozenset(), sentences: int = 6
) -> list[TierKey]:
    """One key per name mentioned (see the module doc), in order of first mention."""
    found = Entities(sentences)
    return [found.key(name) for name in found.add(turns, speakers)]


def speakers_of(turns: Sequence[Slot]) -> frozenset[str]:
    return frozenset(speaker_of(s) for s in turns if speaker_of(s))


def group_sessions(turns: Sequence[Slot]) -> dict[str, list[Slot]]:
    """Turns grouped by :func:`session_of`, each group in the given order."""
    out: dict[str, list[Slot]] = defaultdict(list)
    for slot in turns:
        out[session_of(slot)].append(slot)
    return dict(out)


Rows = npt.NDArray[np.intp]


class KeyTable:
    """Indexed keys as arrays, one entry per key position (the key index's storage order): the
    kind (its place in :data:`KINDS`), the provenance as rows of the turns' index, and the span
    as day ordinals for keys dated by ``span`` (facts and sessions; an entity's span is only its
    first and last mention). The owner keeps it aligned: :meth:`put` after adding or changing
    keys, :meth:`reset` after positions move (forgetting). Cost: ``put`` the keys given and their
    provenance; reading the arrays is free."""

    def __init__(self) -> None:
        self.reset()

    def __len__(self) -> int:
        return len(self.kind)

    def reset(self) -> None:
        """Forget every key (before positions are renumbered, by forgetting)."""
        self.kind = np.empty(0, dtype=np.int8)
        self.dated = np.empty(0, dtype=bool)
        self.first = np.empty(0, dtype=np.int64)
        self.last = np.empty(0, dtype=np.int64)
        self.provenance: list[Rows] = []
        self.sizes = np.empty(0, dtype=np.intp)  # len(provenance[i])

    def put(self, positions: Sequence[int], keys: Sequence[TierKey], rows: Sequence[Rows]) -> None:
        """Record ``keys`` at their index ``positions`` with their provenance ``rows`` (rows
        below 0, turns not in the index, are left out)."""
        if not keys:
            return
        size = max(len(self), max(positions) + 1)
        if size > len(self):
            grow = size - len(self)
            self.kind = np.concatenate([self.kind, np.full(grow, -1, dtype=np.int8)])
            self.dated = np.concatenate([self.dated, np.zeros(grow, dtype=bool)])
            self.first = np.concatenate([self.first, np.zeros(grow, dtype=np.int64)])
            self.last = np.concatenate([self.last, np.zeros(grow, dtype=np.int64)])
            self.provenance += [np.empty(0, dtype=np.intp)] * grow
            self.sizes = np.concatenate([self.sizes, np.zeros(grow, dtype=np.intp)])
        for position, key, found in zip(positions, keys, rows, strict=True):
            self.kind[position] = KINDS.index(key.kind) if key.kind in KINDS else -1
            dated = key.span is not None and key.kind != "entity"
            self.dated[position] = dated
            if key.span is not None and dated:
                self.first[position] = key.span[0].toordinal()
                self.last[position] = key.span[1].toordinal()
            self.provenance[position] = found[found >= 0]
            self.sizes[position] = len(self.provenance[position])

    def gather(self, positions: Rows) -> tuple[Rows, Rows]:
        """The provenance rows of the keys at ``positions``, in their order, and for each row the
        index in ``positions`` of the key it came from."""
        if not len(positions):
            return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)
        parts = [self.provenance[p] for p in positions.tolist()]
        which = np.repeat(np.arange(len(parts), dtype=np.intp), self.sizes[positions])
        return np.concatenate(parts), which

    def near(self, spans: Sequence[Span]) -> npt.NDArray[np.float64]:
        """For every key, how well its span agrees with the best of ``spans``
        (:func:`~smartctx.retrieval.dates.overlap`, vectorised); 0 for undated keys."""
        out = np.zeros(len(self), dtype=np.float64)
        for start, end in spans:
            begin, finish = start.toordinal(), end.toordinal()
            shared = (self.first <= finish) & (begin <= self.last)
            gap = np.where(self.last < begin, begin - self.last, self.first - finish)
            with np.errstate(divide="ignore"):
                score = np.where(shared, 1.0, 15.0 / (15.0 + gap))
            np.maximum(out, score, out=out)
        out[~self.dated] = 0.0
        return out
