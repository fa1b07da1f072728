"""The Agent Framework context provider class (imported only by :mod:`smartctx.agents.maf`,
which turns a missing ``agent_framework`` into ``MissingDependency``)."""

from __future__ import annotations

import logging
from typing import Any

from agent_framework import ContextProvider as AFContextProvider
from agent_framework import Message as AFMessage

from smartctx.agents.providers import ContextProvider, Message
from smartctx.window.render import render_content

logger = logging.getLogger(__name__)

_ROLES = {"user", "assistant", "system", "tool"}


def to_smartctx(message: Any, session_id: str | None) -> Message:
    """An Agent Framework message as a smartctx :class:`Message` (text contents only)."""
    role = str(getattr(message, "role", "user") or "user")
    text = str(getattr(message, "text", "") or "")
    meta: dict[str, Any] = {"thread": session_id} if session_id else {}
    message_id = getattr(message, "message_id", None)
    if message_id:
        meta["message_id"] = str(message_id)
    return Message(role if role in _ROLES else "user", text, meta)


class SmartCtxContextProvider(AFContextProvider):
    """Runs a smartctx provider inside an Agent Framework agent.

    ``before_run``: the run's input messages (as smartctx :class:`Message`, with the session id
    as ``metadata["thread"]``) go to ``get_relevant_context``; each returned slot becomes one
    ``system`` message rendered as the smartctx window renders it (``[source: <id>] <text>``),
    added with ``context.extend_messages``; ``instructions`` go to
    ``context.extend_instructions``. ``after_run``: the input messages and the response's
    messages go to ``on_new_messages``. A failing smartctx provider is logged and recorded in
    ``context.metadata["smartctx_errors"]``; it never fails the run (the smartctx ``Agent``
    contract).
    """

    def __init__(self, provider: ContextProvider, source_id: str) -> None:
        super().__init__(source_id)
        self.provider = provider

    def _failed(self, context: Any, hook: str, exc: Exception) -> None:
        logger.warning("smartctx provider %s.%s failed: %s", self.provider.name, hook, exc)
        errors = context.metadata.setdefault("smartctx_errors", [])
        errors.append(f"{self.provider.name}.{hook}: {type(exc).__name__}: {exc}")

    async def before_run(
        self, *, agent: Any, session: Any, context: Any, state: dict[str, Any]
    ) -> None:
        session_id = getattr(session, "session_id", None) or context.session_id
        messages = [to_smartctx(m, session_id) for m in context.input_messages]
        try:
            provided = await self.provider.get_relevant_context(messages)
        except Exception as exc:
            self._failed(context, "get_relevant_context", exc)
            return
        if provided is None:
            return
        if provided.slots:
            rendered = [
                AFMessage(role="system", contents=[render_content(slot)]) for slot in provided.slots
            ]
            context.extend_messages(self, rendered)
        if provided.instructions and provided.instructions.strip():
            context.extend_instructions(self.source_id, provided.instructions.strip())

    async def after_run(
        self, *, agent: Any, session: Any, context: Any, state: dict[str, Any]
    ) -> None:
        session_id = getattr(session, "session_id", None) or context.session_id
        new = list(context.input_messages)
        if context.response is not None:
            new += list(context.response.messages or [])
        messages = [to_smartctx(m, session_id) for m in new]
        try:
            await self.provider.on_new_messages(messages)
        except Exception as exc:
            self._failed(context, "on_new_messages", exc)
