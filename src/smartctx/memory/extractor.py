"""The profile extractor: turns one utterance into profile observations (English and Korean).

Pure and deterministic. It finds:

- ``preferred_room``: a room named together with a device action ("안방 청정해줘",
  "clean the living room"); "X 말고" / "not the X" contradicts X;
- ``habit_time``: a time of day named with an action ("잘 때는 안방 먼저 청정해" -> ``bedtime``);
- ``likes``: a stated like ("I like jazz", "나는 재즈를 좋아해"); "I don't like X" / "X 싫어"
  contradicts it.

It runs on redacted text, and an observation whose value is sensitive is dropped: a sensitive
value is never promoted. One observation is only evidence; promotion decides what is confirmed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from smartctx.memory.privacy import is_sensitive

SUPPORT = "support"
CONTRADICTION = "contradiction"
ACCEPTANCE = "acceptance"

ROOMS_KO = ("아이방", "작은방", "드레스룸", "안방", "거실", "주방", "부엌", "서재", "침실",
            "베란다", "욕실", "화장실")  # fmt: skip
ROOMS_EN = ("master bedroom", "living room", "kids room", "bedroom", "kitchen", "study",
            "nursery", "bathroom", "office", "dining room")  # fmt: skip
_ACTION = re.compile(
    r"청정|청소|깨끗|공기|환기|켜|틀어|돌려|맑게|"
    r"(?i:\b(?:clean|purif|vacuum|air|turn on|start|ventilat|freshen))"
)
_TIMES: tuple[tuple[str, str], ...] = (
    (r"잘\s*때|자기\s*전|취침|(?i:before bed|bedtime|when i sleep|go to sleep)", "bedtime"),
    (r"아침|(?i:\bmorning)", "morning"),
    (r"저녁|(?i:\bevening)", "evening"),
    (r"밤에|밤마다|(?i:at night|\bnight)", "night"),
    (r"점심|낮에|(?i:afternoon|\bnoon)", "afternoon"),
)
_PHRASE = r"((?:[^.!?,;]|\.(?=\S))+)"  # a period inside a word (x.com) stays
_LIKE_EN = re.compile(r"(?i)\bI\s+(?:really\s+)?(?:like|love|enjoy|prefer)\s+" + _PHRASE)
_DISLIKE_EN = re.compile(
    r"(?i)\bI\s+(?:really\s+)?(?:don't|do not|dont)\s+(?:like|love|enjoy)\s+"
    + _PHRASE
    + r"|\bI\s+(?:hate|dislike)\s+"
    + _PHRASE
)
_LIKE_KO = re.compile(
    r"(?<![가-힣A-Za-z0-9])([가-힣A-Za-z0-9]+?)(?:을|를|이|가|도)?\s*(?:정말\s*|진짜\s*)?좋아(?:해|하|합)"
)
_DISLIKE_KO = re.compile(
    r"(?<![가-힣A-Za-z0-9])([가-힣A-Za-z0-9]+?)(?:은|는|을|를|이|가)?\s*(?:정말\s*|진짜\s*)?싫어"
)
_NOT_ROOM_KO = re.compile(
    r"(" + "|".join(ROOMS_KO) + r")\s*(?:말고|말구|빼고|은 싫|는 싫|하지\s*마)"
)
_NOT_ROOM_EN = re.compile(r"(?i)\bnot\s+(?:the\s+)?(" + "|".join(ROOMS_EN) + r")")
_ARTICLE = re.compile(r"(?i)^(?:the|a|an|to)\s+")


@dataclass(frozen=True, slots=True)
class Observation:
    """One piece of profile evidence found in an utterance."""

    key: str
    value: str
    kind: str = SUPPORT


def rooms_in(text: str) -> list[tuple[int, str]]:
    """The rooms named in ``text`` with their position, in order of appearance."""
    found: list[tuple[int, str]] = []
    lowered = text.casefold()
    for room in ROOMS_KO:
        idx = text.find(room)
        if idx >= 0 and not any(room in other for _, other in found):
            found.append((idx, room))
    for room in ROOMS_EN:
        m = re.search(rf"\b{re.escape(room)}\b", lowered)
        if m and not any(room in other for _, other in found):
            found.append((m.start(), room))
    found.sort()
    return found


def _clean_value(raw: str) -> str:
    value = _ARTICLE.sub("", raw.strip())
    return " ".join(value.split()[:5]).strip()


def extract(text: str) -> list[Observation]:
    """Profile observations in ``text`` (redacted), in a deterministic order, no duplicates."""
    out: list[Observation] = []
    if not text.strip():
        return out
    has_action = bool(_ACTION.search(text))
    negated = {m.group(1) for m in _NOT_ROOM_KO.finditer(text)}
    negated |= {m.group(1).casefold() for m in _NOT_ROOM_EN.finditer(text)}
    rooms = rooms_in(text)
    for room in sorted(negated):
        out.append(Observation("preferred_room", room, CONTRADICTION))
    if has_action:
        for _, room in rooms:
            if room not in negated:
                out.append(Observation("preferred_room", room))
        for pattern, label in _TIMES:
            if re.search(pattern, text):
                out.append(Observation("habit_time", label))
                break
    disliked: set[str] = set()
    for m in _DISLIKE_EN.finditer(text):
        value = _clean_value(m.group(1) or m.group(2) or "")
        if value:
            disliked.add(value.casefold())
            out.append(Observation("likes", value.casefold(), CONTRADICTION))
    for m in _DISLIKE_KO.finditer(text):
        if m.group(1) not in ROOMS_KO:
            disliked.add(m.group(1))
            out.append(Observation("likes", m.group(1), CONTRADICTION))
    for m in _LIKE_EN.finditer(text):
        value = _clean_value(m.group(1)).casefold()
        if value and value not in disliked:
            out.append(Observation("likes", value))
    for m in _LIKE_KO.finditer(text):
        if m.group(1) not in ("나", "저", "내가", "제가") and m.group(1) not in disliked:
            out.append(Observation("likes", m.group(1)))
    unique: list[Observation] = []
    for obs in out:
        if obs not in unique and obs.value and not is_sensitive(obs.value):
            unique.append(obs)
    return unique


__all__ = [
    "ACCEPTANCE",
    "CONTRADICTION",
    "ROOMS_EN",
    "ROOMS_KO",
    "SUPPORT",
    "Observation",
    "extract",
    "rooms_in",
]
