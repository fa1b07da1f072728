"""The prompt as a chat model takes it: one system message, then strict alternation.

Chat templates of open models (Llama, Mistral, Gemma...) accept one leading system message and
then ``user`` / ``assistant`` turns that alternate, the last one from the user; many raise on two
messages of one role in a row. :func:`chat_messages` shapes an assembled prompt that way:

1. **One system message**: the rules (the ``system`` slots, in order), then the sourced context
   in sections, each item once, on its own paragraph with its tag: ``## Conversation summary``
   (summaries), ``## Memory`` (``[source: mem:...]``, ``[source: pair:...]`` ...),
   ``## Recalled`` (``[recalled from: ...]``), ``## Knowledge`` (``[source: kb:...]``) and
   ``## Tool log`` (``[tool: ...]``: tool logs live here, never after the user turn).
2. **The conversation**: ``user`` and ``assistant`` messages in time order. Neighbours of one
   role are joined into one message; conversation that cannot alternate (a reply whose question
   was evicted, at the start; questions whose replies were evicted, just before the current
   one) moves into the system message as ``## Earlier messages`` (``[earlier user message]``,
   ``[earlier assistant reply]``), so the current user turn is always last and alone.

Pure; cost linear in the prompt's slots.
"""

from __future__ import annotations

from collections.abc import Sequence

from smartctx.core.slots import Slot, SlotKind

SECTIONS: tuple[tuple[str, str], ...] = (
    ("summary", "Conversation summary"),
    ("memory", "Memory"),
    ("recalled", "Recalled"),
    ("knowledge", "Knowledge"),
    ("earlier", "Earlier messages"),
    ("tool", "Tool log"),
)
"""Section keys and their headings, in the order they appear in the system message."""
HEADINGS = frozenset(f"## {title}" for _, title in SECTIONS)
EARLIER_USER = "[earlier user message]"
EARLIER_ASSISTANT = "[earlier assistant reply]"

_SECTION_OF = {
    SlotKind.SUMMARY: "summary",
    SlotKind.MEMORY: "memory",
    SlotKind.RAG_DOC: "knowledge",
    SlotKind.TOOL_LOG: "tool",
}


def chat_messages(
    entries: Sequence[tuple[Slot | None, str]],
    recalled: Sequence[tuple[Slot, str]] = (),
) -> list[dict[str, str]]:
    """``entries`` (a slot and its rendered content, in prompt order; ``None`` marks nothing)
    and ``recalled`` archived slots with their rendered content as chat messages (see the
    module docstring). A recalled tool log goes to the tool log, a recalled user or assistant
    message to the earlier messages (an old reply is never presented as knowledge)."""
    rules: list[str] = []
    sections: dict[str, list[str]] = {key: [] for key, _ in SECTIONS}
    for old, content in recalled:
        if old.kind is SlotKind.TOOL_LOG:
            sections["tool"].append(f"[tool: {old.source_id or 'tool'}] {old.text}")
        elif old.kind is SlotKind.USER:
            sections["earlier"].append(f"{EARLIER_USER} {old.text}")
        elif old.kind is SlotKind.AGENT:
            sections["earlier"].append(f"{EARLIER_ASSISTANT} {old.text}")
        else:
            sections["recalled"].append(content)
    turns: list[tuple[str, str]] = []
    for slot, content in entries:
        if slot is None:
            continue
        if slot.kind is SlotKind.SYSTEM:
            rules.append(content)
        elif slot.kind is SlotKind.USER:
            turns.append(("user", content))
        elif slot.kind is SlotKind.AGENT:
            turns.append(("assistant", content))
        else:
            sections[_SECTION_OF[slot.kind]].append(content)
    merged: list[tuple[str, str]] = []
    for role, content in turns:
        if merged and merged[-1][0] == role:
            merged[-1] = (role, f"{merged[-1][1]}\n\n{content}")
        else:
            merged.append((role, content))
    earlier = sections["earlier"]
    while merged and merged[0][0] == "assistant":
        earlier.append(f"{EARLIER_ASSISTANT} {merged.pop(0)[1]}")
    if merged and merged[-1][0] == "user" and len(turns) > 1 and turns[-1][0] == "user":
        # the current question stays alone; earlier questions without a kept reply move up
        current = turns[-1][1]
        joined = merged[-1][1]
        if joined != current:
            earlier.append(f"{EARLIER_USER} {joined[: len(joined) - len(current)].rstrip()}")
            merged[-1] = ("user", current)
    body = "\n\n".join(rules)
    for key, title in SECTIONS:
        if sections[key]:
            body += ("\n\n" if body else "") + f"## {title}\n" + "\n\n".join(sections[key])
    out = [{"role": "system", "content": body}] if body else []
    return out + [{"role": role, "content": content} for role, content in merged]
