"""Fact extraction and consolidation through a chat model (mem0-style), when one is configured.

The offline path (:func:`smartctx.agents.facts.extract_facts` plus same-attribute supersession)
stays the default. With a chat model, :class:`LLMConsolidator` shows the model the new user
message and the owner's current facts that look related, and asks for operations as JSON::

    {"operations": [
      {"op": "add", "text": "My team is Platform.", "attribute": "team"},
      {"op": "update", "id": "<existing id>", "text": "My desk is 5C.", "attribute": "desk"},
      {"op": "delete", "id": "<existing id>"},
      {"op": "keep", "id": "<existing id>"}
    ]}

``add`` stores a new fact; ``update`` stores the new text under the old fact's attribute, so the
old one is superseded (kept, with validity times, in the audit) rather than erased; ``delete``
stores a retraction of the attribute (the old fact stops being recalled, and stays in the
audit); ``keep`` changes nothing. Operations naming an unknown id are ignored. A reply that is
not the JSON above (prose, malformed JSON, wrong types) or a model failure makes
:meth:`LLMConsolidator.operations` return ``None``, and the caller falls back to the offline
extractor: a turn never fails because the memory model misbehaved.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from smartctx.agents.models import ChatModel
from smartctx.core.errors import SmartCtxError

logger = logging.getLogger(__name__)

PROMPT = (
    "You maintain a user's long-term memory. Read the user's new message and their current "
    'facts. Reply with JSON only: {"operations": [...]}, each operation one of '
    '{"op": "add", "text": ..., "attribute": ...}, {"op": "update", "id": ..., "text": ..., '
    '"attribute": ...}, {"op": "delete", "id": ...}, {"op": "keep", "id": ...}. A fact is a '
    'short first-person sentence about the user ("My desk is 5C."); attribute names what it '
    'is about ("desk"). Keep names, numbers and decisions exactly. Questions, requests and '
    'small talk are not facts: reply {"operations": []} for them.'
)
_OPS = frozenset({"add", "update", "delete", "keep"})
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")


@dataclass(frozen=True, slots=True)
class Operation:
    """One consolidation step (see the module docstring)."""

    op: str
    id: str | None = None
    text: str = ""
    attribute: str | None = None


class LLMConsolidator:
    """Asks ``model`` how a new message changes the owner's facts (see the module docstring)."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model

    async def operations(
        self, message: str, current: Sequence[tuple[str, str]]
    ) -> list[Operation] | None:
        """The operations for ``message`` given ``current`` ``(id, text)`` facts, or ``None``
        when the model failed or did not answer with valid operations."""
        facts = "\n".join(f"- id={item_id}: {text}" for item_id, text in current) or "(none)"
        messages = [
            {"role": "system", "content": PROMPT},
            {"role": "user", "content": f"Current facts:\n{facts}\n\nNew message:\n{message}"},
        ]
        try:
            reply = await self.model.complete(messages, temperature=0.0)
        except SmartCtxError as err:
            logger.warning("memory model failed, using the offline extractor: %s", err.message)
            return None
        return parse_operations(reply, {item_id for item_id, _ in current})


def parse_operations(reply: str, known: set[str]) -> list[Operation] | None:
    """The valid operations of a model ``reply`` (ids must be in ``known`` for update, delete
    and keep), or ``None`` when the reply is not the expected JSON object."""
    try:
        data = json.loads(_FENCE.sub("", reply))
    except (json.JSONDecodeError, TypeError):
        return None
    raw = data.get("operations") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        return None
    out: list[Operation] = []
    for entry in raw:
        if not isinstance(entry, dict) or entry.get("op") not in _OPS:
            continue
        op = str(entry["op"])
        item_id = entry.get("id")
        text = entry.get("text")
        attribute = entry.get("attribute")
        if op != "add" and (not isinstance(item_id, str) or item_id not in known):
            continue
        if op in ("add", "update") and (not isinstance(text, str) or not text.strip()):
            continue
        out.append(
            Operation(
                op=op,
                id=item_id if isinstance(item_id, str) else None,
                text=text.strip() if isinstance(text, str) else "",
                attribute=" ".join(attribute.casefold().split())
                if isinstance(attribute, str) and attribute.strip()
                else None,
            )
        )
    return out
