"""Reading LoCoMo (Maharana et al., ACL 2024) into turns and questions.

The file is a list of samples; each has ``conversation`` (``speaker_a``, ``speaker_b``,
``session_N_date_time``, ``session_N`` = turns ``{speaker, dia_id, text[, blip_caption]}``) and
``qa`` (``{question, answer, evidence, category}``); the answer is kept for scoring answers
(``--qa``) alone. Categories 1-4 (multi-hop, temporal,
open-domain, single-hop) have evidence; 5 (adversarial) has none and is skipped.

Evidence is parsed leniently: every ``D<session>:<turn>`` found in an evidence string counts
(``"D8:6; D9:17"`` gives two). Ids that name no turn are dropped and counted; a question left with
no usable evidence is skipped and counted. Only the question text and the conversation are ever
given to a retriever: answers and evidence are used for scoring alone.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from smartctx.core.errors import InvalidInput, NotFound

CATEGORIES: dict[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_DIA = re.compile(r"D\d+:\d+")
_SESSION = re.compile(r"session_(\d+)$")


@dataclass(frozen=True)
class Turn:
    """One dialogue turn. ``time`` is the session's date as ISO-8601 (``""`` if unparseable)."""

    dia_id: str
    speaker: str
    text: str
    session: int
    time: str
    date: str
    caption: str = ""


@dataclass(frozen=True)
class Question:
    """A question of categories 1-4 with at least one evidence turn of its conversation."""

    text: str
    category: int
    evidence: tuple[str, ...]
    answer: str = ""


@dataclass
class Conversation:
    """The turns (in order) and usable questions of one LoCoMo sample."""

    sample_id: str
    speakers: tuple[str, str]
    turns: list[Turn]
    questions: list[Question]


@dataclass
class LoCoMo:
    """The conversations read, and what was skipped (``skipped`` counts by reason)."""

    conversations: list[Conversation]
    skipped: Counter[str] = field(default_factory=Counter)

    @property
    def questions(self) -> int:
        return sum(len(c.questions) for c in self.conversations)

    @property
    def turns(self) -> int:
        return sum(len(c.turns) for c in self.conversations)


def parse_session_date(raw: str) -> str:
    """``"1:56 pm on 8 May, 2023"`` -> ``"2023-05-08T13:56"``; ``""`` when it does not parse."""
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%d %B, %Y"):
        try:
            return datetime.strptime(raw.strip(), fmt).strftime("%Y-%m-%dT%H:%M")
        except ValueError:
            continue
    return ""


def _turns(conv: dict[str, Any]) -> list[Turn]:
    sessions = sorted(int(m.group(1)) for key in conv if (m := _SESSION.match(key)))
    out: list[Turn] = []
    for n in sessions:
        raw_date = str(conv.get(f"session_{n}_date_time", ""))
        when = parse_session_date(raw_date)
        for turn in conv[f"session_{n}"] or []:
            caption = turn.get("blip_caption") or ""
            out.append(
                Turn(
                    dia_id=str(turn["dia_id"]),
                    speaker=str(turn.get("speaker", "")),
                    text=str(turn.get("text", "")),
                    session=n,
                    time=when,
                    date=raw_date,
                    caption=str(caption),
                )
            )
    return out


def _questions(qa: list[dict[str, Any]], known: set[str], skipped: Counter[str]) -> list[Question]:
    out: list[Question] = []
    for item in qa:
        category = int(item.get("category", 0))
        if category not in CATEGORIES:
            skipped["category 5 (adversarial, no evidence)"] += 1
            continue
        found = [d for raw in item.get("evidence") or [] for d in _DIA.findall(str(raw))]
        usable = tuple(dict.fromkeys(d for d in found if d in known))
        skipped["evidence ids naming no turn"] += len(set(found) - set(usable))
        if not usable:
            skipped["questions without usable evidence"] += 1
            continue
        answer = str(item.get("answer", ""))
        out.append(Question(str(item["question"]), category, usable, answer))
    return out


def load_locomo(
    path: Path,
    *,
    limit: int | None = None,
    questions: int | None = None,
    exclude: set[str] | None = None,
) -> LoCoMo:
    """Read ``path``; ``limit`` keeps the first N conversations, ``questions`` the first N
    questions of each, ``exclude`` drops conversations by sample id (a held-out split is the
    full file less the development one). Raises ``NotFound`` for a missing file and
    ``InvalidInput`` for one that is not LoCoMo-shaped."""
    if not path.is_file():
        raise NotFound(f"LoCoMo file {path} not found: pass --data PATH/locomo-dev.json")
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path} is not JSON: {exc}") from exc
    if not isinstance(samples, list):
        raise InvalidInput(f"{path} should hold a list of LoCoMo samples")
    data = LoCoMo([])
    for index, sample in enumerate(samples[:limit] if limit is not None else samples):
        sample_id = (
            str(sample.get("sample_id", f"sample-{index}")) if isinstance(sample, dict) else ""
        )
        if exclude is not None and sample_id in exclude:
            continue
        try:
            conv = sample["conversation"]
            turns = _turns(conv)
            qa = list(sample.get("qa") or [])
            speakers = (str(conv.get("speaker_a", "")), str(conv.get("speaker_b", "")))
        except (KeyError, TypeError) as exc:
            raise InvalidInput(f"sample {index} of {path} is not LoCoMo-shaped: {exc}") from exc
        found = _questions(qa, {t.dia_id for t in turns}, data.skipped)
        if questions is not None:
            found = found[:questions]
        data.conversations.append(Conversation(sample_id, speakers, turns, found))
    return data


def default_data_path(cwd: Path | None = None) -> Path:
    """``../shared/data/locomo/locomo-dev.json`` from ``cwd`` if present, else ``/work/shared``."""
    base = cwd or Path.cwd()
    local = (base / ".." / "shared" / "data" / "locomo" / "locomo-dev.json").resolve()
    if local.is_file():
        return local
    return Path("/work/shared/data/locomo/locomo-dev.json")
