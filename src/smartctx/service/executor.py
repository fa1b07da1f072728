"""The A2A executor: one A2A message is one turn of the smartctx agent loop on a context window.

For a message in context ``(owner, contextId)`` the executor, holding the context's lock:

1. opens the persisted window (creating it, with the ``smartctx`` metadata options or the
   server's defaults, on the first message) — the a2a-sdk gives the executor no earlier turns,
   so they come from our store, which is why memory survives a restart; the statement that
   reads the context's version also reads the owner's stores' versions (``probes``,
   :mod:`smartctx.store.turn_probes`), which the steps below would otherwise read one by one;
2. runs every turn hook's ``before_turn`` and adds the slots they return;
3. runs :meth:`smartctx.agents.Agent.run`: the user message enters pinned for the turn, the
   server's context providers (knowledge base: ``rag_doc`` + ``tool_log`` slots) and, for a
   context whose preset is in ``owner_presets``, the owner's own providers (``owner_providers``:
   long-term memory recalled across the owner's contexts, confirmed profile) add their slots,
   the prompt is assembled (recalling archived slots of the thread when the window has a
   recaller), the chat model answers, the reply enters, the funnel runs;
   The user text's and the reply's embeddings are computed ahead on a worker pool
   (``precompute``, :mod:`smartctx.service.precompute`), so the window finds them cached;
4. starts indexing, off the loop, the slots the turn archived for the window's recaller
   (``indexer``, :mod:`smartctx.service.recall_index`; the context's next turn waits for it,
   and scores its recall ahead, on the indexer's pool while its providers search),
   persists the window (one transaction), then runs ``after_turn`` hooks;
5. answers with an artifact whose text is the reply (detected secrets redacted, also those
   the reply repeats from the user's message; a value the turn's knowledge-base passages hold,
   such as a helpdesk address, is published and stays) and whose metadata holds
   ``{"smartctx": {"events": [...], "snapshot": {compact}, "promptTokens": n}}`` (camelCase
   keys, see :mod:`smartctx.service.wire`) plus what the hooks returned, and completes the task.

A plain ``SendMessage`` that starts a task (no ``returnImmediately``, no push configuration)
is stored once, finished: no one can ask for the task before the answer names it, so the
executor enqueues the completed (or failed) task as one event, one task save where the started
task, its artifact and its completion took three. A stream, or a send someone can watch, gets
the task stored WORKING first and then every event.

When the chat model streams (:class:`~smartctx.agents.models.StreamingChatModel`) to a stream
request, the reply artifact is sent in chunks as the tokens arrive (see
:class:`~smartctx.service.artifact_stream.ArtifactStream`): the first
creates the artifact, the others append to it, and the last (``last_chunk``) carries the
metadata, so the artifact's text is the chunks concatenated.

If anything fails the task fails with a message naming the error, and nothing of the turn is
persisted (the registry drops the in-memory window).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any

from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Message as A2AMessage
from a2a.types.a2a_pb2 import Part, Task, TaskState

from smartctx.agents import Agent, ChatModel, ContextProvider, Message, Thread
from smartctx.agents.agent import HISTORY_FOR_PROVIDERS
from smartctx.agents.llm_summary import LLMSummarizer
from smartctx.agents.models import ChatMessages, StreamingChatModel, TokenSink
from smartctx.core.errors import SmartCtxError
from smartctx.core.settings import Settings
from smartctx.core.slots import Event, EventKind, Slot, SlotKind
from smartctx.memory.privacy import private_findings, redact_echoes
from smartctx.memory.read_cache import turn_reads
from smartctx.service.artifact_stream import ArtifactStream
from smartctx.service.contexts import (
    ContextRegistry,
    LiveContext,
    compact_snapshot,
    describe_events,
)
from smartctx.service.handler import ONE_EVENT, message_metadata
from smartctx.service.hooks import TurnContext, TurnHook
from smartctx.service.owner import owner_of
from smartctx.service.precompute import PrecomputingProvider, TurnPrecompute
from smartctx.service.recall_index import RecallIndexer, RecallSettled
from smartctx.service.windows import options_from_metadata
from smartctx.service.wire import METADATA_KEY, camel_keys
from smartctx.store.turn_probes import Probe, probing
from smartctx.window import ContextWindow

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
        self,
        inner: ChatModel,
        memory_rule: bool,
        formatter: HistoryFormatter | None,
        precompute: TurnPrecompute | None = None,
        public: Callable[[], list[str]] | None = None,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.memory_rule = memory_rule
        self.formatter = formatter
        self.precompute = precompute
        self.public = public

    def _prepare(self, messages: ChatMessages) -> ChatMessages:
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
        return out

    async def complete(self, messages: ChatMessages, *, temperature: float | None = None) -> str:
        # A reply never repeats a detected secret (card, password, key...): the artifact, the
        # agent slot and the stored pair all get the redacted text.
        prepared = self._prepare(messages)
        reply = await self.inner.complete(prepared, temperature=temperature)
        public = self.public() if self.public is not None else []
        reply = redact_echoes(reply, _asked(prepared), public=public)
        if self.precompute is not None:
            await self.precompute.reply(reply)
        return reply

    async def stream(
        self, messages: ChatMessages, *, temperature: float | None = None
    ) -> AsyncIterator[str]:
        """The inner model's chunks, or its whole reply as one chunk if it does not stream. A
        turn whose prompt holds a secret (the request, or an earlier message of the thread; a
        value of the knowledge-base passages is published, not secret) is not streamed: its
        reply is redacted whole first."""
        prepared = self._prepare(messages)
        public = self.public() if self.public is not None else []
        if isinstance(self.inner, StreamingChatModel) and not _holds_private(prepared, public):
            async for chunk in self.inner.stream(prepared, temperature=temperature):
                yield chunk
        else:
            yield await self.complete(messages, temperature=temperature)


def knowledge_in(window: ContextWindow) -> list[str]:
    """The knowledge-base passages in ``window`` (``rag_doc`` slots from ``kb:`` sources): what
    a reply quotes from them (a helpdesk address) is published, not the user's secret."""
    return [
        slot.text
        for slot in window.active
        if slot.kind is SlotKind.RAG_DOC and (slot.source_id or "").startswith("kb:")
    ]


def _holds_private(messages: ChatMessages, public: list[str]) -> bool:
    """Whether a message holds a sensitive value that no ``public`` text holds."""
    return any(private_findings(str(m.get("content", "")), public) for m in messages)


def _asked(messages: ChatMessages) -> str:
    """The last user message of ``messages`` ("" when none)."""
    return next((str(m["content"]) for m in reversed(messages) if m["role"] == "user"), "")


HISTORY_KEPT = 2 * HISTORY_FOR_PROVIDERS
"""Messages of a live context kept between turns (providers see the last few)."""


def history_of(live: LiveContext) -> list[Message]:
    """The conversation so far as agent messages (from the stored log, oldest first)."""
    return _messages(live.window.log)


def _messages(slots: Iterable[Slot]) -> list[Message]:
    out: list[Message] = []
    for slot in slots:
        if slot.kind is SlotKind.USER:
            out.append(Message("user", slot.text, {"slot_id": slot.id}))
        elif slot.kind is SlotKind.AGENT:
            out.append(Message("assistant", slot.text, {"slot_id": slot.id}))
    return out


def carry_history(stale: LiveContext, reloaded: LiveContext) -> None:
    """Give ``reloaded`` (loaded again after another replica's turns, its log going on from
    ``stale``'s) ``stale``'s recent messages and turn count, brought up to date with the slots
    logged since, so its first turn here does not read the whole log again."""
    if stale.history is None:
        return
    since = _messages(reloaded.window.log_page(stale.window.log_size, reloaded.window.log_size))
    reloaded.history = [*stale.history, *since][-HISTORY_KEPT:]
    reloaded.turns = stale.turns + sum(1 for m in since if m.role == "user")


def thread_of(live: LiveContext, context_id: str, owner: str) -> Thread:
    """The agent thread of a live context: the whole log is read once per load of the context,
    then only the last :data:`HISTORY_KEPT` messages and the turn count are carried over."""
    if live.history is None:
        history = history_of(live)
        live.turns = sum(1 for m in history if m.role == "user")
        live.history = history[-HISTORY_KEPT:]
    thread = Thread(live.window, id=context_id, owner=owner, history=live.history)
    thread.turns = live.turns
    return thread


def keep_thread(live: LiveContext, thread: Thread) -> None:
    """Carry the thread's last messages and turn count to the next turn of ``live``."""
    live.history = thread.messages[-HISTORY_KEPT:]
    live.turns = thread.turns


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
        precompute: TurnPrecompute | None = None,
        indexer: RecallIndexer | None = None,
        probes: Sequence[Probe] = (),
    ) -> None:
        self.registry = registry
        self.probes = tuple(probes)
        """Version probes of the owner's stores, answered with the context's version read."""
        self.settings = settings
        self.model = model
        self.providers = list(providers)
        self.hooks = list(hooks)
        self.history_formatter = history_formatter
        self.owner_providers = owner_providers
        self.owner_presets = owner_presets
        self.precompute = precompute
        self.indexer = indexer
        # with a configured model, summaries the funnel writes are rewritten by it after a turn
        self.summarizer = LLMSummarizer(model) if settings.memory_model_on else None

    def providers_for(self, owner: str, preset: str) -> list[ContextProvider]:
        """The providers of a turn of ``owner`` in a context of ``preset``."""
        if self.owner_providers is None or preset not in self.owner_presets:
            return list(self.providers)
        return [*self.providers, *self.owner_providers(owner)]

    stream_flush_seconds = 0.05
    """Streamed reply chunks closer together than this go out as one artifact update."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        if message is None or context.task_id is None or context.context_id is None:
            raise SmartCtxError("the A2A request carries no message")
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        # A new task that no one watches while it runs (a plain SendMessage) is saved once, when
        # it ends: the client learns its id only from the answer. Otherwise (a stream, a
        # returnImmediately send, a task continued) it is saved WORKING first, then per event.
        once = context.current_task is None and bool(
            context.call_context and context.call_context.state.get(ONE_EVENT)
        )
        if context.current_task is None:
            task = new_task_from_user_message(message)
            if not once:
                # A new task starts in WORKING: one save where SUBMITTED then WORKING took two.
                await event_queue.enqueue_event(_ended(task, TaskState.TASK_STATE_WORKING))
        else:
            await updater.start_work()
        owner = owner_of(context.call_context)
        artifact = ArtifactStream(updater, self.stream_flush_seconds)
        try:
            reply, meta = await self.turn(
                owner,
                context.context_id,
                context.get_user_input(),
                message_metadata(message),
                on_token=None if once else artifact.on_token,
            )
        except SmartCtxError as err:
            logger.warning("turn failed in context %s: %s", context.context_id, err.message)
            failure = self._error_message(updater, err.to_dict())
        except Exception as err:
            logger.exception("turn failed in context %s", context.context_id)
            # The exception text may hold SQL or paths: the client gets none of it.
            detail = {
                "error": "internal_error",
                "message": f"the turn failed ({type(err).__name__}); the server logged the details",
            }
            failure = self._error_message(updater, detail)
        else:
            if once:
                task.artifacts.append(artifact.whole(reply, meta))
                await event_queue.enqueue_event(_ended(task, TaskState.TASK_STATE_COMPLETED))
            else:
                await artifact.finish(reply, meta)
                await updater.complete()
            return
        if once:
            await event_queue.enqueue_event(_ended(task, TaskState.TASK_STATE_FAILED, failure))
        else:
            await updater.failed(failure)

    @staticmethod
    def _error_message(updater: TaskUpdater, detail: dict[str, Any]) -> Any:
        text = f"{detail.get('error')}: {detail.get('message')}"
        return updater.new_agent_message(
            [Part(text=text)], metadata={METADATA_KEY: camel_keys(detail)}
        )

    async def turn(
        self,
        owner: str,
        context_id: str,
        text: str,
        metadata: dict[str, Any],
        *,
        on_token: TokenSink | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """One turn; returns the reply and the artifact metadata. Usable without A2A (tests).

        ``on_token`` receives the reply's chunks as the model produces them."""
        # one memory stamp read a turn (smartctx.memory.read_cache), and the owner's version
        # probes answered by the context's version read (smartctx.store.turn_probes)
        with turn_reads(), probing(owner, self.probes):
            return await self._turn(owner, context_id, text, metadata, on_token=on_token)

    async def _turn(
        self,
        owner: str,
        context_id: str,
        text: str,
        metadata: dict[str, Any],
        *,
        on_token: TokenSink | None,
    ) -> tuple[str, dict[str, Any]]:
        options = options_from_metadata(self.settings, metadata)
        create = options or self.registry.options()
        turn = TurnContext(owner, context_id, text, dict(metadata))
        if self.precompute is not None:
            await self.precompute.user_text(text)
        async with self.registry.session(owner, context_id, create=create) as live:
            for hook in self.hooks:  # after the version read, which answers the turn's probes
                await hook.before_turn(turn)
            events = []
            for slot in turn.slots:
                events += live.add(_hook_slot(slot)).events
            providers = self.providers_for(owner, live.preset)
            if self.precompute is not None:
                providers = [PrecomputingProvider(p, self.precompute) for p in providers]
            if self.indexer is not None and live.window.recaller is not None:
                providers = [*providers, RecallSettled(self.indexer, live)]
            agent = Agent(
                _TurnModel(
                    self.model,
                    bool(turn.slots),
                    self.history_formatter,
                    self.precompute,
                    public=lambda: knowledge_in(live.window),
                ),
                providers,
                summarizer=self.summarizer,
                full_snapshots=False,  # the reply carries the usage only (compact_snapshot)
            )
            thread = thread_of(live, context_id, owner)
            sink = on_token if isinstance(self.model, StreamingChatModel) else None
            result = await agent.run(Message("user", text, {"owner": owner}), thread, on_token=sink)
            keep_thread(live, thread)
            events += result.events
            live.last_prompt = result.prompt
            if self.precompute is not None:
                await self.precompute.archived(live.window, result.events)
            if self.indexer is not None:
                archived = _archived(live, result.events)
                live.indexing = self.indexer.start(live.window.recaller, archived)
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
        return result.reply, {**extra, METADATA_KEY: camel_keys(info)}

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Turns are short and not interruptible: cancellation is reported as canceled."""
        if context.task_id and context.context_id:
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


_ARCHIVING = frozenset({EventKind.DROPPED, EventKind.SUMMARIZED, EventKind.EVICTED})


def _archived(live: LiveContext, events: Sequence[Event]) -> list[Slot]:
    """The slots ``events`` archived (each once, as logged now) that recall ranks (the first
    copy of each text)."""
    ids = dict.fromkeys(e.slot_id for e in events if e.kind in _ARCHIVING)
    return live.window.recall_copies(live.window.get(i) for i in ids)


def _hook_slot(slot: Slot) -> Slot:
    """A copy of a hook's slot, unpinned (memory is support, never command) and marked as
    provided for this turn (a turn focus archives it when the turn ends)."""
    provider = slot.metadata.get("provider", "hook")
    return slot.copy(pinned=False, metadata={**slot.metadata, "provider": provider})


def _ended(task: Task, state: Any, message: A2AMessage | None = None) -> Task:
    """``task`` in ``state`` as of now, with the status ``message`` if any."""
    task.status.state = state
    if message is not None:
        task.status.message.CopyFrom(message)
    task.status.timestamp.GetCurrentTime()
    return task
