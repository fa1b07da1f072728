"""The turn-hook contract between the A2A service and pluggable per-turn extensions.

A hook sees every A2A turn twice. ``before_turn`` runs after the user message is known and
before the chat model is called: it may append slots (kind ``memory``, each with a
``source_id``) to ``turn.slots``, which the service adds to the context window before the
model call, and it may set ``turn.planner_input``. ``after_turn`` runs once the reply is known
(``turn.reply`` is filled); the dict it returns is merged into the reply artifact's metadata.

Hooks run in the order given, in the request's event loop. A hook that raises fails the turn
with an A2A error; nothing of the turn is persisted in that case. The personal-memory hook
(``smartctx.service.personal_hook``) is the built-in user of this contract.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from smartctx.core.slots import Slot


@dataclass
class TurnContext:
    """What a hook knows about one turn; hooks may mutate ``slots`` and ``planner_input``."""

    owner: str
    context_id: str
    user_text: str
    metadata: dict[str, Any]  # the incoming A2A message metadata (copy)
    reply: str | None = None  # filled before after_turn
    # slots the hook wants added to the window before the model call (kind memory, with source_id)
    slots: list[Slot] = field(default_factory=list)
    # optional: text placed in the prompt for the model (current utterance first)
    planner_input: str | None = None
    # what a hook keeps from its before_turn for its after_turn (keyed by the hook's own name)
    notes: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class TurnHook(Protocol):
    """A per-turn extension of the A2A service.

    ``extension_uri`` is declared in the agent card's ``capabilities.extensions`` when not None.
    """

    extension_uri: str | None

    async def before_turn(self, turn: TurnContext) -> None:
        """Called before the model call; may append to ``turn.slots``."""
        ...

    async def after_turn(self, turn: TurnContext) -> dict[str, Any]:
        """Called after the reply; the returned dict is merged into the artifact metadata."""
        ...


__all__ = ["TurnContext", "TurnHook"]
