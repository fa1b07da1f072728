"""How slots become prompt text: one rendering used both to count tokens and to assemble.

A slot's ``tokens`` are counted on :func:`render_content` (plus the window's fixed per-message
overhead), so the sum of the active slots' tokens is exactly what :meth:`ContextWindow.assemble`
sends.

Order of an assembled prompt: system slots; then summaries, memory items, recalled slots; then
knowledge documents (``rag_doc``, tagged ``[source: ...]``); then the conversation (user, agent and
tool logs) in time order, so the current turn comes last.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from smartctx.core.slots import Event, Slot, SlotKind
from smartctx.window.chat import chat_messages

ROLE: dict[SlotKind, str] = {
    SlotKind.SYSTEM: "system",
    SlotKind.USER: "user",
    SlotKind.AGENT: "assistant",
    SlotKind.RAG_DOC: "system",
    SlotKind.TOOL_LOG: "system",
    SlotKind.SUMMARY: "system",
    SlotKind.MEMORY: "system",
}
"""Chat role of each kind (OpenAI-style roles)."""

SECTION: dict[SlotKind, int] = {
    SlotKind.SYSTEM: 0,
    SlotKind.SUMMARY: 1,
    SlotKind.MEMORY: 2,
    SlotKind.RAG_DOC: 3,
    SlotKind.USER: 4,
    SlotKind.AGENT: 4,
    SlotKind.TOOL_LOG: 4,
}
"""Prompt section of each kind; within a section slots keep time order."""


def render_content(slot: Slot) -> str:
    """The message content for ``slot``: knowledge and memory carry their source id."""
    if slot.kind is SlotKind.RAG_DOC or slot.kind is SlotKind.MEMORY:
        if slot.source_id:
            return f"[source: {slot.source_id}] {slot.text}"
    elif slot.kind is SlotKind.TOOL_LOG and slot.source_id:
        return f"[tool: {slot.source_id}] {slot.text}"
    return slot.text


def render_recalled(slot: Slot) -> str:
    """Content of a slot recalled from the archive: always names where it came from."""
    origin = slot.source_id or f"{slot.kind.value}:{slot.id[:8]}"
    return f"[recalled from: {origin}] {slot.text}"


@dataclass(frozen=True, slots=True)
class Prompt:
    """An assembled prompt.

    ``messages`` are chat messages ``{"role", "content"}``, one per slot (what the token counts
    add up to); ``chat`` is the same content shaped for a chat model, which is what the agent
    sends: one system message (rules, then the sourced context in sections, tool logs included)
    and strict user/assistant alternation, the current user turn last
    (:mod:`smartctx.window.chat`); ``text`` is ``messages`` as plain text
    (``ROLE: content`` blocks); ``slots`` are copies of the active slots sent, in prompt order;
    ``recalled`` are copies of archived slots brought back for this query; ``tokens`` is the token
    count of everything sent (active + recalled).
    """

    messages: list[dict[str, str]]
    text: str
    slots: list[Slot]
    recalled: list[Slot] = field(default_factory=list)
    tokens: int = 0
    events: list[Event] = field(default_factory=list)
    chat: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "messages": [dict(m) for m in self.messages],
            "chat": [dict(m) for m in self.chat],
            "text": self.text,
            "slots": [s.to_dict() for s in self.slots],
            "recalled": [s.to_dict() for s in self.recalled],
            "tokens": self.tokens,
        }


def order_slots(active: Sequence[Slot], recency: dict[str, int]) -> list[Slot]:
    """``active`` in prompt order: by section, then by recency (a merged slot counts as new)."""
    return sorted(active, key=lambda s: (SECTION[s.kind], recency.get(s.id, s.seq), s.seq))


def build_prompt(
    ordered: Sequence[Slot], recalled: Sequence[Slot], tokens: int, events: list[Event]
) -> Prompt:
    """Render ``ordered`` active slots with ``recalled`` slots after summaries and memory."""
    entries: list[tuple[str, str]] = []
    placed = not recalled
    for slot in ordered:
        if not placed and SECTION[slot.kind] > SECTION[SlotKind.MEMORY]:
            entries += [("system", render_recalled(r)) for r in recalled]
            placed = True
        entries.append((ROLE[slot.kind], render_content(slot)))
    if not placed:
        entries += [("system", render_recalled(r)) for r in recalled]
    messages = [{"role": role, "content": content} for role, content in entries]
    chat = chat_messages(
        [(slot, render_content(slot)) for slot in ordered],
        [(r, render_recalled(r)) for r in recalled],
    )
    text = "\n\n".join(f"{role.upper()}: {content}" for role, content in entries)
    return Prompt(
        messages=messages,
        text=text,
        slots=[s.copy() for s in ordered],
        recalled=[s.copy() for s in recalled],
        tokens=tokens,
        events=list(events),
        chat=chat,
    )
