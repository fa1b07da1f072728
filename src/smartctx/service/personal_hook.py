"""The personal-memory turn hook: the ``a2a-memory-context-v1`` extension on A2A.

``before_turn`` reads the device's voice context from the message metadata under
:data:`~smartctx.memory.contract.EXTENSION_URI` (``{"voice_context": {...,"memory_snapshot":
...}}``, or the voice context itself); without one it builds the owner's snapshot from the
store. It normalises it (compact, redacted), adds it to the window as ``memory`` slots with
source ids (``profile:<key>``, ``pair:<id>``, ``summary:session|day:<day>|week``) and sets
``planner_input`` with the current utterance first: memory is support, never command.

Relevant recall only: the candidates (the last :data:`CANDIDATE_PAIRS` pairs of the owner's other
sessions, the summaries, the confirmed profile) lose the rows not worth recalling
(:func:`smartctx.memory.quality.junk_reason`: abstentions, errors, scaffolding, chit-chat),
then a :class:`~smartctx.agents.relevance.RelevanceGate` keeps those relevant to the current
request, best first, each once, within ``allowance`` tokens. They enter at priority
:data:`RECALL_PRIORITY`, below the turn's knowledge documents (``rag_doc`` 7), so memory never
displaces the evidence of the current turn. Without a gate every candidate is added (the
device-contract tests and the demo use that).

``after_turn`` stores the turn as a pair (idempotent by the device's ``pair_id`` when given),
which runs the profile extractor, unless it is not worth remembering (then nothing is stored and
the update carries the current sync state), and returns ``{EXTENSION_URI:
build_memory_update(...)}`` with ``assistant_text`` filled and the profile candidates the turn
touched.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeGuard

from smartctx.agents.facts import fact_attribute, restated_later, stated_facts
from smartctx.agents.relevance import ABOUT_USER_QUESTION, query_for
from smartctx.core.slots import Slot, SlotKind
from smartctx.core.tokens import TokenCounter
from smartctx.memory.contract import (
    EXTENSION_URI,
    build_memory_update,
    normalize_memory_context,
    snapshot_of,
)
from smartctx.memory.pairs import MAX_TEXT, PairIn
from smartctx.memory.personal import PersonalMemory
from smartctx.memory.planner import build_planner_input, render_planner_input
from smartctx.memory.quality import is_junk_text, junk_reason
from smartctx.memory.snapshot import server_snapshot
from smartctx.service.hooks import TurnContext

if TYPE_CHECKING:
    from smartctx.agents.relevance import RelevanceGate

CANDIDATE_PAIRS = 20
"""Recent pairs considered for recall (a bounded window: recall never scans the history)."""
RECALL_PRIORITY = 6.0
"""Priority of recalled memory slots: below ``rag_doc`` (7), above old agent replies (5)."""

_VOICE_FIELDS = ("session_id", "last_route", "active_workflow_id")


def _voice_context(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The device's voice context from the extension metadata (empty when absent)."""
    raw = metadata.get(EXTENSION_URI)
    if not isinstance(raw, Mapping):
        return {}
    inner = raw.get("voice_context")
    return dict(inner) if isinstance(inner, Mapping) else dict(raw)


class PersonalMemoryHook:
    """Implements ``smartctx.service.hooks.TurnHook`` over a :class:`PersonalMemory`."""

    extension_uri: str | None = EXTENSION_URI

    def __init__(
        self,
        memory: PersonalMemory,
        *,
        max_pairs: int = 5,
        gate: RelevanceGate | None = None,
        counter: TokenCounter | None = None,
        allowance: int = 400,
    ) -> None:
        self.memory = memory
        self.max_pairs = max_pairs
        self.gate = gate
        self.counter = counter
        self.allowance = allowance

    async def before_turn(self, turn: TurnContext) -> None:
        voice = _voice_context(turn.metadata)
        pairs = CANDIDATE_PAIRS if self.gate is not None else self.max_pairs
        if snapshot_of(voice):
            source: Mapping[str, Any] = voice
            snapshot: Mapping[str, Any] = snapshot_of(voice)
        else:
            snapshot = await server_snapshot(
                self.memory, turn.owner, exclude_session=turn.context_id, max_pairs=pairs
            )
            source = {"memory_snapshot": snapshot}
            turn.notes["personal_sync"] = snapshot.get("sync")
        context = normalize_memory_context(source, max_pairs=pairs)
        turn.slots.extend(await self._relevant(turn.user_text, _slots(context, snapshot)))
        planner = build_planner_input(
            turn.user_text,
            context,
            voice_context={k: voice[k] for k in _VOICE_FIELDS if k in voice},
            device_context=voice.get("device_context")
            if isinstance(voice.get("device_context"), Mapping)
            else None,
        )
        turn.planner_input = render_planner_input(planner)

    async def _relevant(self, request: str, candidates: list[Slot]) -> list[Slot]:
        """The candidates worth recalling for ``request`` (see the module docstring)."""
        gate = self.gate
        if gate is None:
            return candidates
        worthy = _current([s for s in candidates if _worth_recalling(s)])
        if not worthy:
            return []
        counter = self.counter
        profile = [s for s in worthy if s.metadata.get("memory") == "profile"]
        rest = [s for s in worthy if s.metadata.get("memory") != "profile"]

        searched = query_for(request)  # "Who am I?" is "What is my name?"

        def select() -> list[tuple[Slot, float]]:
            if searched == ABOUT_USER_QUESTION:
                # what is known of the user: the profile, and the turns in which they stated
                # something of themselves, latest first
                stated = [s for s in rest if _stated(s)]
                kept = [(s, 1.0) for s in [*profile, *reversed(stated)]]
            else:
                # a profile item is judged by its value ("안방" bears on "안방 청정 시작해줘"), a
                # turn by its text with what the user stated in it ("My name is Priya.")
                kept = gate.select(
                    searched,
                    profile,
                    lambda s: str(s.metadata.get("value", s.text)),
                    symmetric=True,
                )
                kept += gate.select(searched, rest, lambda s: f"{s.text} {_stated(s)}".strip())
            kept.sort(key=lambda pair: -pair[1])
            out: list[tuple[Slot, float]] = []
            used = 0
            for slot, value in kept:
                cost = counter.count(slot.text) if counter is not None else 0
                if used + cost <= self.allowance:
                    used += cost
                    out.append((slot, value))
            return out

        chosen = await asyncio.to_thread(select)  # embeds: off the event loop
        return [
            slot.copy(
                priority=RECALL_PRIORITY,
                metadata={**slot.metadata, "relevance": round(score, 4)},
            )
            for slot, score in chosen
        ]

    async def after_turn(self, turn: TurnContext) -> dict[str, Any]:
        voice = _voice_context(turn.metadata)
        route = str(voice.get("route_family") or voice.get("last_route") or "DEF")
        workflow = str(voice.get("workflow_id") or voice.get("active_workflow_id") or "")
        pair = PairIn(
            turn.user_text[:MAX_TEXT],  # a long turn is kept in the window log; memory keeps
            (turn.reply or "")[:MAX_TEXT],  # its head, and never fails the turn for its size
            id=str(voice.get("pair_id") or uuid.uuid4().hex),
            session_id=str(voice.get("session_id") or turn.context_id),
            route_family=route,
            workflow_id=workflow,
        )
        if self.gate is not None and junk_reason(turn.user_text, turn.reply or ""):
            # Nothing is stored: the sync state is the one this turn's snapshot read, if any.
            seen = turn.notes.get("personal_sync")
            sync_state: Mapping[str, Any] = (
                seen if _is_sync(seen) else await self.memory.sync_state(turn.owner)
            )
            stored: dict[str, Any] = {**sync_state, "profile_candidates": []}
        else:
            stored = await self.memory.add_pair(turn.owner, pair)
        device_sync = snapshot_of(voice).get("sync")
        sync = (
            device_sync
            if isinstance(device_sync, Mapping)
            else {"cursor": stored["cursor"], "version": stored["version"]}
        )
        update = build_memory_update(
            user_text=turn.user_text,
            assistant_text=turn.reply or "",
            route_family=route,
            workflow_id=workflow,
            sync=sync,
            profile_candidates=stored["profile_candidates"],
            pair_id=pair.id,
        )
        return {EXTENSION_URI: update}


def create_hook(
    memory: PersonalMemory,
    *,
    gate: RelevanceGate | None = None,
    counter: TokenCounter | None = None,
    allowance: int = 400,
) -> PersonalMemoryHook:
    """The hook the service wires by default (with a relevance gate and a token allowance)."""
    return PersonalMemoryHook(memory, gate=gate, counter=counter, allowance=allowance)


def _is_sync(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """Whether ``value`` is a snapshot's ``{"cursor", "version"}``."""
    return isinstance(value, Mapping) and {"cursor", "version"} <= value.keys()


def _stated(slot: Slot) -> str:
    """What the user stated of themselves in a remembered turn, in a normal form ("" if none)."""
    user = slot.metadata.get("user")
    return " ".join(stated_facts(user)) if isinstance(user, str) else ""


def _current(candidates: list[Slot]) -> list[Slot]:
    """``candidates`` without the remembered turns (oldest first) whose every statement is of an
    attribute a later turn states again: after "My manager is Ana Lopez." and, later, "My manager
    is now Tom Berg.", only the latter answers "Who is my manager?" (as the long-term memory
    supersedes the fact, :func:`~smartctx.agents.facts.restated_later`). A turn that also states
    something else stays; so do summaries and profile items."""
    attributes: list[list[str]] = []
    other: list[bool] = []  # states something that is no attribute
    for slot in candidates:
        user = slot.metadata.get("user")
        found = [fact_attribute(f) for f in (stated_facts(user) if isinstance(user, str) else [])]
        attributes.append([a[0] for a in found if a is not None])
        other.append(None in found)
    gone = restated_later(attributes)
    return [s for s, g, o in zip(candidates, gone, other, strict=True) if o or not g]


def _worth_recalling(slot: Slot) -> bool:
    """False for a remembered row that should never come back (existing bad rows included)."""
    user = slot.metadata.get("user")
    if isinstance(user, str):
        return junk_reason(user, str(slot.metadata.get("assistant", ""))) is None
    return not is_junk_text(slot.text)


def _slots(context: Mapping[str, Any], snapshot: Mapping[str, Any]) -> list[Slot]:
    """Memory slots for the window, each with a source id (and provenance when known)."""
    out: list[Slot] = []
    raw_items = (snapshot.get("long_term") or {}).get("profile_items") or []
    ids = {
        (i.get("key"), str(i.get("value"))): i.get("id") for i in raw_items if isinstance(i, dict)
    }
    for item in context["long_term"]["profile_items"]:
        key = item.get("key") or item.get("category") or "item"
        item_id = ids.get((item.get("key"), str(item.get("value"))))
        conf = f", confidence {item['confidence']}" if "confidence" in item else ""
        out.append(
            Slot(
                SlotKind.MEMORY,
                f"User profile{conf}: {key} = {item['value']}",
                source_id=f"profile:{key}",
                provenance=(f"profile:{item_id}",) if item_id else (),
                metadata={"memory": "profile", "value": str(item["value"])},
            )
        )
    short = context["short_term"]
    raw_pairs = (snapshot.get("short_term") or {}).get("recent_pairs") or []
    offset = len(raw_pairs) - len(short["recent_pairs"])
    for i, pair in enumerate(short["recent_pairs"]):
        raw = raw_pairs[offset + i] if 0 <= offset + i < len(raw_pairs) else {}
        pid = raw.get("id") if isinstance(raw, dict) else None
        out.append(
            Slot(
                SlotKind.MEMORY,
                f"Earlier turn. User: {pair['user']} / Assistant: {pair['assistant']}",
                source_id=f"pair:{pid or f'device-{i}'}",
                metadata={"memory": "pair", "user": pair["user"], "assistant": pair["assistant"]},
            )
        )
    summaries = [("summary:session", short["session_summary"])]
    summaries += [
        (f"summary:day:{d['day']}", d["summary"]) for d in context["mid_term"]["daily_summaries"]
    ]
    summaries.append(("summary:week", context["mid_term"]["weekly_digest"]))
    for source_id, text in summaries:
        if text:
            out.append(
                Slot(SlotKind.MEMORY, f"Memory summary: {text}", source_id=source_id,
                     metadata={"memory": "summary"})
            )  # fmt: skip
    return out


__all__ = ["PersonalMemoryHook", "create_hook"]
