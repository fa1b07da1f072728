"""What an ``add`` call becomes: mem0's ``messages`` (a string or chat messages) to memories.

- a string is one memory, stored as given (redacted);
- chat messages with ``infer`` (the default): each *user* message is redacted, its fact sentences
  become ``fact`` memories (:func:`~smartctx.agents.facts.extract_facts`, the extractor the agent
  uses in conversations) and, unless it is a question or already one fact, the whole message
  becomes a ``turn`` memory; assistant and system messages are not the user's facts and are
  skipped;
- chat messages with ``infer=False``: every user and assistant message is one ``turn`` memory,
  verbatim but redacted, with its role in the metadata.
Sensitive values (e-mails, phone and card numbers, secrets) are replaced by
``[REDACTED:<kind>]`` before anything is stored, as in every memory tier.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from smartctx.agents.facts import extract_facts
from smartctx.core.errors import InvalidInput
from smartctx.core.sentences import is_question
from smartctx.memory.privacy import redact
from smartctx.service.memories.records import NewMemory

MAX_MESSAGES = 200
ROLES = ("user", "assistant", "system")


def memories_from(
    messages: str | Sequence[Mapping[str, Any]],
    *,
    infer: bool = True,
    kind: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    metadata: dict[str, Any] | None = None,
    provenance: Sequence[str] = (),
) -> list[NewMemory]:
    """The memories to store for one ``add`` call (see the module docstring); may be empty."""
    meta = dict(metadata or {})
    scope: dict[str, Any] = {
        "agent_id": agent_id,
        "session_id": session_id,
        "provenance": tuple(provenance),
    }
    if isinstance(messages, str):
        return [NewMemory(redact(messages), kind=kind or "fact", metadata=meta, **scope)]
    if not messages:
        raise InvalidInput("messages is empty: give a text or at least one message")
    if len(messages) > MAX_MESSAGES:
        raise InvalidInput(f"at most {MAX_MESSAGES} messages per add, got {len(messages)}")
    out: list[NewMemory] = []
    for number, message in enumerate(messages, start=1):
        role, content = message.get("role"), message.get("content")
        if role not in ROLES or not isinstance(content, str):
            raise InvalidInput(
                f"message {number} needs a role (user, assistant or system) and a text content"
            )
        text = redact(content).strip()
        if not text or role == "system" or (infer and role != "user"):
            continue
        if not infer:
            role_meta = meta | {"role": role}
            out.append(NewMemory(text, kind=kind or "turn", metadata=role_meta, **scope))
            continue
        facts = [f.strip() for f in extract_facts(text) if f.strip()]
        out.extend(NewMemory(f, kind=kind or "fact", metadata=dict(meta), **scope) for f in facts)
        if not is_question(text) and [text] != facts:
            out.append(NewMemory(text, kind=kind or "turn", metadata=dict(meta), **scope))
    return out


__all__ = ["MAX_MESSAGES", "memories_from"]
