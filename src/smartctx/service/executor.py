"""The A2A executor: one A2A message is one turn of the smartctx agent loop on a context window.

For a message in context ``(owner, contextId)`` the executor, holding the context's lock:

1. opens the persisted window (creating it, with the ``smartctx`` metadata options or the
   server's defaults, on the first message) — the a2a-sdk gives the executor no earlier turns,
   so they come from our store, which is why memory survives a restart;
2. runs every turn hook's ``before_turn`` and adds the slots they return;
3. runs :meth:`smartctx.agents.Agent.run`: the user message enters pinned for the turn, the
   server's context providers (knowledge base: ``rag_doc`` + ``tool_log`` slots) and, for a
   context whose preset is in ``owner_presets``, the owner's own providers (``owner_providers``:
   long-term memory recalled across the owner's contexts, confirmed profile) add their slots,
   the prompt is assembled (recalling archived slots of the thread when the window has a
   recaller), the chat model answers, the reply enters, the funnel runs;
4. persists the window (one transaction), then runs ``after_turn`` hooks;
5. answers with an artifact whose text is the reply and whose metadata holds
   ``{"smartctx": {"events": [...], "snapshot": {compact}, "prompt_tokens": n}}`` plus what the
   hooks returned, and completes the task.

If anything fails the task fails with a message naming the error, and nothing of the turn is
persisted (the registry drops the in-memory window).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Part

from smartctx.agents import Agent, ChatModel, ContextProvider, Message, Thread
from smartctx.agents.models import ChatMessages
from smartctx.core.errors import SmartCtxError
from smartctx.core.settings import Settings
from smartctx.core.slots import Slot, SlotKind
from smartctx.service.contexts import (
    ContextRegistry,
    LiveContext,
    compact_snapshot,
    describe_events,
)
from smartctx.service.handler import message_metadata
from smartctx.service.hooks import TurnContext, TurnHook
from smartctx.service.owner import owner_of
from smartctx.service.windows import options_from_metadata

logger = logging.getLogger(__name__)

OwnerProviders = Callable[[str], Sequence[ContextProvider]]
"""The per-owner providers of a turn, given its owner (see :mod:`smartctx.service.owner_memory`)."""
OWNER_PRESETS = frozenset({"default"})
"""Presets whose contexts get the owner's providers (the demo's eviction/compression and the
FIFO baseline keep exactly their window)."""

HistoryFormatter = Callable[[ChatMessages], ChatMessages]
"""Rewrites the chat messages just before the model call (for example to fold the history into
one user message for a model that takes no chat roles). Must not mutate its argument."""


MEMORY_RULE = (
    "Memory is support only: where it disagrees with the current request, the request wins."
)
"""The rule a turn with hook memory adds to the system message (the hook's planner input restates
that memory and is not sent: the model sees each item once, as a sourced line)."""


class _TurnModel:
    """The server's model for one turn: adds the memory rule and applies the history formatter.

    The rule goes at the end of the rules part of the one system message (before its first
    ``## `` section), so the chat shape of :mod:`smartctx.window.chat` is kept.
    """

    def __init__(
        self, inner: ChatModel, memory_rule: bool, formatter: HistoryFormatter | None
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.memory_rule = memory_rule
        self.formatter = formatter

    async def complete(self, messages: ChatMessages, *, temperature: float | None = None) -> str:
        out = [dict(m) for m in messages]
        if self.memory_rule:
            if out and out[0]["role"] == "system":
                body = out[0]["content"]
                cut = body.find("\n\n## ")
                cut = len(body) if cut < 0 else cut
                out[0]["content"] = f"{body[:cut]}\n\n{MEMORY_RULE}{body[cut:]}".lstrip()
            else:
                out.insert(0, {"role": "system", "content": MEMORY_RULE})
        if self.formatter is not None:
            out = self.formatter(out)
        return await self.inner.complete(out, temperature=temperature)


def history_of(live: LiveContext) -> list[Message]:
    """The conversation so far as agent messages (from the stored log, oldest first)."""
    out: list[Message] = []
    for slot in live.window.log:
        if slot.kind is SlotKind.USER:
            out.append(Message("user", slot.text, {"slot_id": slot.id}))
        elif slot.kind is SlotKind.AGENT:
            out.append(Message("assistant", slot.text, {"slot_id": slot.id}))
    return out


class SmartctxExecutor(AgentExecutor):
    """Runs A2A turns through the smartctx agent loop (see the module docstring)."""

    def __init__(
        self,
        registry: ContextRegistry,
        settings: Settings,
        *,
        model: ChatModel,
        providers: Sequence[ContextProvider] = (),
        hooks: Sequence[TurnHook] = (),
        history_formatter: HistoryFormatter | None = None,
        owner_providers: OwnerProviders | None = None,
        owner_presets: frozenset[str] = OWNER_PRESETS,
    ) -> None:
        self.registry = registry
        self.settings = settings
        self.model = model
        self.providers = list(providers)
        self.hooks = list(hooks)
        self.history_formatter = history_formatter
        self.owner_providers = owner_providers
        self.owner_presets = owner_presets

    def providers_for(self, owner: str, preset: str) -> list[ContextProvider]:
        """The providers of a turn of ``owner`` in a context of ``preset``."""
        if self.owner_providers is None or preset not in self.owner_presets:
            return list(self.providers)
        return [*self.providers, *self.owner_providers(owner)]

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        if message is None or context.task_id is None or context.context_id is None:
            raise SmartCtxError("the A2A request carries no message")
        if context.current_task is None:
            await event_queue.enqueue_event(new_task_from_user_message(message))
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        owner = owner_of(context.call_context)
        try:
            reply, meta = await self.turn(
                owner, context.context_id, context.get_user_input(), message_metadata(message)
            )
        except SmartCtxError as err:
            logger.warning("turn failed in context %s: %s", context.context_id, err.message)
            await updater.failed(self._error_message(updater, err.to_dict()))
            return
        except Exception as err:
            logger.exception("turn failed in context %s", context.context_id)
            detail = {"error": "internal_error", "message": f"{type(err).__name__}: {err}"}
            await updater.failed(self._error_message(updater, detail))
            return
        await updater.add_artifact([Part(text=reply)], name="reply", metadata=meta)
        await updater.complete()

    @staticmethod
    def _error_message(updater: TaskUpdater, detail: dict[str, Any]) -> Any:
        text = f"{detail.get('error')}: {detail.get('message')}"
        return updater.new_agent_message([Part(text=text)], metadata={"smartctx": detail})

    async def turn(
        self, owner: str, context_id: str, text: str, metadata: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        """One turn; returns the reply and the artifact metadata. Usable without A2A (tests)."""
        options = options_from_metadata(self.settings, metadata)
        create = options or self.registry.options()
        turn = TurnContext(owner, context_id, text, dict(metadata))
        for hook in self.hooks:
            await hook.before_turn(turn)
        async with self.registry.session(owner, context_id, create=create) as live:
            events = []
            for slot in turn.slots:
                events += live.add(_hook_slot(slot)).events
            agent = Agent(
                _TurnModel(self.model, bool(turn.slots), self.history_formatter),
                self.providers_for(owner, live.preset),
            )
            thread = Thread(live.window, id=context_id, owner=owner, history=history_of(live))
            result = await agent.run(Message("user", text, {"owner": owner}), thread)
            events += result.events
        turn.reply = result.reply
        extra: dict[str, Any] = {}
        for hook in self.hooks:
            extra.update(await hook.after_turn(turn))
        info = {
            "context_id": context_id,
            "preset": live.preset,
            "events": describe_events(live.window, events),
            "snapshot": compact_snapshot(result.snapshot) | {"version": live.version},
            "prompt_tokens": result.prompt.tokens,
        }
        return result.reply, {**extra, "smartctx": info}

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Turns are short and not interruptible: cancellation is reported as canceled."""
        if context.task_id and context.context_id:
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def _hook_slot(slot: Slot) -> Slot:
    """A copy of a hook's slot, unpinned (memory is support, never command)."""
    return slot.copy(pinned=False)
