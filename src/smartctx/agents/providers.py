"""Context providers: the seam through which memory, RAG and profiles reach an agent.

This is the contract of the seed ``context-providers.md`` (DESIGN.md section 5). An
:class:`~smartctx.agents.agent.Agent` asks every provider for context *before* the model call and
hands the new messages to every provider *after* it. Providers must not mutate what they are
given: the agent passes copies, but a provider that keeps messages should copy them anyway.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from smartctx.core import InvalidInput, Slot

ROLES = frozenset({"system", "user", "assistant", "tool"})


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message as providers see it.

    ``role`` is ``"user"``, ``"assistant"``, ``"system"`` or ``"tool"``; ``metadata`` carries
    free-form JSON data (thread id, owner, slot id...). Frozen, so a provider cannot alter the
    history the agent keeps.
    """

    role: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise InvalidInput(f"unknown message role {self.role!r}: use one of {sorted(ROLES)}")
        if not isinstance(self.text, str):
            raise InvalidInput(f"message text must be a string, got {type(self.text).__name__}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view (``{"role", "text", "metadata"}``)."""
        return {"role": self.role, "text": self.text, "metadata": dict(self.metadata)}


@dataclass(slots=True)
class ProvidedContext:
    """What a provider contributes to one turn.

    ``slots`` are added to the thread's window in order (their kinds, priorities and source ids
    are kept as given). ``instructions`` is extra guidance for the model; the agent adds it as a
    ``memory`` slot whose ``source_id`` is ``provider:<provider name>`` (see ``Agent.run``).
    """

    slots: list[Slot] = field(default_factory=list)
    instructions: str | None = None

    @property
    def empty(self) -> bool:
        """True when there is nothing to add."""
        return not self.slots and not (self.instructions and self.instructions.strip())


class ContextProvider(ABC):
    """Base class for providers like long-term memory, a knowledge base or a profile.

    Contract:
    - ``get_relevant_context(messages)`` receives the recent messages of the thread, the new user
      message last, and returns what is relevant to it, or ``None``.
    - ``on_new_messages(messages)`` receives the messages of a finished turn (user then assistant)
      and may store what is worth recalling later.
    - ``clear()`` forgets everything the provider stored (for its owner, where it has one).
    An exception raised by any hook is caught by the agent, recorded as a ``tool_log`` slot and
    never fails the turn.
    """

    @property
    def name(self) -> str:
        """A short name used in logs and source ids (the class name by default)."""
        return type(self).__name__

    @abstractmethod
    async def get_relevant_context(self, messages: list[Message]) -> ProvidedContext | None:
        """Searches for and returns any information relevant to the messages."""

    @abstractmethod
    async def on_new_messages(self, messages: list[Message]) -> None:
        """Stores any information derived from the messages that may be useful later."""

    async def clear(self) -> None:  # noqa: B027 - a provider that stores nothing has nothing to clear
        """Forgets what the provider stored. The default stores nothing, so does nothing."""
