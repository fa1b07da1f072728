"""How an OpenAI request's messages enter a smartctx context.

An OpenAI client sends the whole conversation on every call; the context already holds what
earlier calls through the proxy stored. ``new_history`` finds the messages before the current
user turn that the context does not hold yet: the request's earlier messages minus the longest
run of them that continues the stored history (so a client that trims its own history, or
resends the same history, adds nothing twice). Those enter the window as ``user`` / ``agent``
slots (tool results as ``tool_log``) before the turn runs; the window's admission then merges or
refuses any that duplicate what is active. System (and developer) messages set the system
prompt of a context the request creates; a context that exists keeps its own.

Cost: proportional to the request's messages plus the stored conversation (one pass each).
"""

from __future__ import annotations

from collections.abc import Sequence

from smartctx.core.slots import Slot, SlotKind
from smartctx.service.openai_proxy.schema import ChatMessage

Turn = tuple[str, str]
"""(role, text) with role ``user`` or ``assistant``."""

_KINDS = {"user": SlotKind.USER, "assistant": SlotKind.AGENT}
SOURCE = "openai:history"


def _key(role: str, text: str) -> Turn:
    return (role, " ".join(text.split()))


def system_prompt(messages: Sequence[ChatMessage]) -> str | None:
    """The request's system and developer messages joined, or ``None`` when it has none."""
    parts = [m.text.strip() for m in messages if m.role in ("system", "developer")]
    parts = [p for p in parts if p]
    return "\n\n".join(parts) if parts else None


def new_history(stored: Sequence[Turn], messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The request's messages before the last one that the stored conversation lacks.

    ``stored`` is the context's conversation, oldest first. The longest prefix of the
    request's conversation that equals the end of ``stored`` is already there; the rest is new.
    """
    earlier = [m for m in messages[:-1] if m.role not in ("system", "developer")]
    keys = [_key(m.role, m.text) for m in earlier if m.role in _KINDS]
    tail = [_key(role, text) for role, text in stored[-len(keys) :]] if keys else []
    overlap = 0
    for size in range(min(len(keys), len(tail)), 0, -1):
        if keys[:size] == tail[len(tail) - size :]:
            overlap = size
            break
    out: list[ChatMessage] = []
    seen = 0
    for message in earlier:
        if message.role in _KINDS:
            seen += 1
            if seen <= overlap:
                continue
        elif seen < overlap:
            continue
        if message.text.strip():
            out.append(message)
    return out


def history_slot(message: ChatMessage, context_id: str) -> Slot:
    """The slot an earlier request message becomes."""
    kind = _KINDS.get(message.role, SlotKind.TOOL_LOG)
    source = SOURCE if kind is not SlotKind.TOOL_LOG else f"openai:{message.name or 'tool'}"
    return Slot(kind, message.text, source_id=source, metadata={"thread": context_id})
