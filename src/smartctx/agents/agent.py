"""The agent loop: providers, the context window and a chat model, one turn at a time.

See :meth:`Agent.run` for the order of a turn and what happens on failure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from smartctx.agents.facts import stated_facts
from smartctx.agents.llm_summary import LLMSummarizer, revise_summaries
from smartctx.agents.models import ChatModel, TokenSink, complete_streaming
from smartctx.agents.providers import ContextProvider, Message, ProvidedContext
from smartctx.agents.relevance import contextual_query, has_own_topic, query_for, thread_topic
from smartctx.core import Event, InvalidInput, Slot, SlotKind, SlotState, SmartCtxError
from smartctx.core.slots import new_id

if TYPE_CHECKING:
    from smartctx.core import Settings
    from smartctx.window import ContextWindow, Prompt

HISTORY_FOR_PROVIDERS = 8
"""How many earlier messages of a thread providers see (plus the new user message)."""


class Thread:
    """One conversation: a context window plus the messages exchanged in it.

    ``id`` names the thread (an A2A ``contextId``), ``owner`` the tenant/user whose providers
    and memory it uses. ``history`` seeds the message list; when it is ``None`` the history is
    read from the window's log (its ``user`` and ``agent`` slots that were not merged or
    refused, in log order), so a thread over a restored window continues where it was. Runs on
    one thread are serialised by ``lock``; different threads run concurrently.
    """

    def __init__(
        self,
        window: ContextWindow,
        *,
        id: str | None = None,
        owner: str = "default",
        history: Iterable[Message] | None = None,
    ) -> None:
        if not owner:
            raise InvalidInput("a thread needs a non-empty owner")
        self.window = window
        self.id = id or new_id()
        self.owner = owner
        self.messages: list[Message] = (
            list(history) if history is not None else history_from_window(window)
        )
        self.turns = sum(1 for m in self.messages if m.role == "user")
        self.lock = asyncio.Lock()

    def recent(self, n: int = HISTORY_FOR_PROVIDERS) -> list[Message]:
        """The last ``n`` messages, oldest first (copies are unnecessary: messages are frozen)."""
        return self.messages[-n:] if n > 0 else []

    def __repr__(self) -> str:
        return f"Thread(id={self.id!r}, owner={self.owner!r}, messages={len(self.messages)})"


@dataclass(frozen=True, slots=True)
class RunResult:
    """The outcome of one turn.

    ``events`` are the window events of this turn in order (admissions, merges, evictions,
    recalls, the unpinning of the user slot); ``snapshot`` the window's snapshot after the turn
    (the JSON shape of every surface); ``prompt`` exactly what the model was sent.
    ``provider_errors`` names providers that failed this turn (each also logged as a
    ``tool_log`` slot).
    """

    reply: str
    events: list[Event]
    snapshot: dict[str, Any]
    prompt: Prompt
    user_slot_id: str = ""
    reply_slot_id: str | None = None
    provider_errors: list[str] = field(default_factory=list)


class Agent:
    """A chat model with context providers, running turns on :class:`Thread` objects.

    With ``summarizer``, every summary the funnel writes during a turn is rewritten by a chat
    model at the end of the turn (see :mod:`smartctx.agents.llm_summary`). ``providers`` are
    asked in the order given (concurrently; their answers are applied in that order). The
    constructor does no I/O.
    """

    def __init__(
        self,
        model: ChatModel,
        providers: Sequence[ContextProvider] = (),
        *,
        name: str = "smartctx",
        temperature: float | None = None,
        history_for_providers: int = HISTORY_FOR_PROVIDERS,
        summarizer: LLMSummarizer | None = None,
        full_snapshots: bool = True,
    ) -> None:
        self.model = model
        self.summarizer = summarizer
        self.full_snapshots = full_snapshots
        """False: ``RunResult.snapshot`` holds the window's usage only (budget, tokens, counts
        per kind, version, log size; no slots or events), for callers that read no more (the
        service's replies), sparing a copy of every active slot per turn."""
        self.providers: list[ContextProvider] = list(providers)
        self.name = name
        self.temperature = temperature
        self.history_for_providers = history_for_providers

    def add_context_provider(self, provider: ContextProvider) -> None:
        """Adds ``provider`` after the existing ones."""
        self.providers.append(provider)

    def new_thread(
        self,
        *,
        id: str | None = None,
        owner: str = "default",
        system_prompt: str | None = None,
        settings: Settings | None = None,
        window: ContextWindow | None = None,
    ) -> Thread:
        """A fresh thread with a default window built from ``settings``.

        The window gets ``system_prompt`` (default: ``settings.system_prompt``) as its pinned
        ``system`` slot. Pass ``window`` to use your own (its system slot is then yours too).
        """
        if window is None:
            from smartctx.core import Settings

            cfg = settings or Settings()
            window = default_window(cfg)
            prompt = cfg.system_prompt if system_prompt is None else system_prompt
            if prompt:
                window.add(Slot(SlotKind.SYSTEM, prompt, pinned=True, source_id="system"))
        return Thread(window, id=id, owner=owner)

    async def run(
        self, message: str | Message, thread: Thread, *, on_token: TokenSink | None = None
    ) -> RunResult:
        """Runs one turn on ``thread`` and returns its result.

        With ``on_token``, the reply is streamed: each chunk goes to ``on_token`` as the model
        produces it (one chunk, the whole reply, for a model that does not stream), and the
        chunks concatenated are the reply.

        Order: (1) the user message enters the window as
        a pinned ``user`` slot (pinned for this turn only: memory never displaces the current
        request); (2) every provider is asked with
        the thread's recent messages plus the new one; their slots are added (copied, unpinned,
        with fresh ids; kinds, priorities and source ids kept) and their ``instructions`` become
        a ``memory`` slot with source id ``provider:<name>``; (3) ``window.assemble(query=...)``
        (the query is the message, or for a follow-up that retrieved no knowledge or names no
        topic, see :func:`~smartctx.agents.relevance.contextual_query`, the thread's topic, the
        last user message that named one, and the message: recall can bring it back);
        (4) the model is called with the prompt's chat messages (one system message, then
        strict user/assistant alternation, see :mod:`smartctx.window.chat`); (5) the reply
        enters as an ``agent`` slot; (6) the turn ends (``window.end_turn()``: the user slot,
        or the earlier slot a repeated question was merged into, is unpinned; with a turn focus
        what only this turn needed is archived, see :mod:`smartctx.window.focus`); (7) the user
        and assistant messages go to every provider's ``on_new_messages``. A provider slot the
        window rejects (invalid priority...) is treated like a provider failure.

        Failure: a provider that raises (in either hook) is recorded as a ``tool_log`` slot
        (source id ``provider:<name>``) and skipped; the turn goes on. A model failure
        (``UpstreamError``...) propagates, after the turn is ended, and providers are
        not told about a turn that produced no reply. ``BudgetExceeded`` from the user slot
        propagates with nothing added.
        """
        if isinstance(message, Message) and message.role != "user":
            raise InvalidInput(f"run() takes a user message, got role {message.role!r}")
        text = message.text if isinstance(message, Message) else message
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("a message needs non-empty text")
        async with thread.lock:
            return await self._turn(text, message, thread, on_token)

    async def _turn(
        self, text: str, message: str | Message, thread: Thread, on_token: TokenSink | None
    ) -> RunResult:
        window = thread.window
        turn = thread.turns + 1
        base_meta = {"thread": thread.id, "owner": thread.owner, "turn": turn}
        extra = dict(message.metadata) if isinstance(message, Message) else {}
        # what the message states of the user, in a normal form, joins its search key
        # ("Hi, I'm Priya" is found by "What is my name?" once archived; retrieval/keys.py)
        stated = " ".join(stated_facts(text))
        user_slot = Slot(
            SlotKind.USER,
            text,
            pinned=True,
            source_id=f"{thread.id}:{turn}",
            metadata={**base_meta, "stated": stated} if stated else base_meta,
        )
        user_msg = Message("user", text, {**extra, **base_meta, "slot_id": user_slot.id})
        events: list[Event] = list(window.add(user_slot).events)
        errors: list[str] = []
        try:
            asked = [*thread.recent(self.history_for_providers), user_msg]
            evidence = False
            for provider, slot in await self._gather_context(asked, errors):
                try:
                    events += window.add(slot).events
                    evidence = evidence or slot.kind is SlotKind.RAG_DOC
                except (SmartCtxError, ValueError, TypeError) as exc:
                    errors.append(provider.name)
                    events += window.add(_failure_slot(provider, "slot", exc)).events
            previous = thread_topic([m.text for m in thread.messages if m.role == "user"])
            # a follow-up that names nothing ("Who should I contact?") is about the message
            # that did ("I lost my laptop"), which may have left the window: recall it
            followed = evidence and has_own_topic(text)
            query = query_for(text) if followed else contextual_query(text, previous)
            prompt = window.assemble(query=query)
            events += prompt.events
            reply = await complete_streaming(
                self.model,
                [dict(m) for m in prompt.chat],
                temperature=self.temperature,
                on_token=on_token,
            )
            reply_slot_id: str | None = None
            if reply.strip():
                reply_slot = Slot(
                    SlotKind.AGENT, reply, source_id=f"{thread.id}:{turn}:reply", metadata=base_meta
                )
                reply_slot_id = reply_slot.id
                events += window.add(reply_slot).events
        finally:
            # end_turn, not unpin(user_slot.id): a repeated question is merged into the earlier
            # slot, which is then the pinned one.
            events += window.end_turn()
        if self.summarizer is not None:
            events += await revise_summaries(window, events, self.summarizer)
        assistant_msg = Message("assistant", reply, {**base_meta, "slot_id": reply_slot_id})
        thread.messages += [user_msg, assistant_msg]
        thread.turns = turn
        for provider in self.providers:
            try:
                await provider.on_new_messages([user_msg, assistant_msg])
            except Exception as exc:
                errors.append(provider.name)
                events += window.add(_failure_slot(provider, "on_new_messages", exc)).events
        return RunResult(
            reply=reply,
            events=events,
            snapshot=(
                window.snapshot() if self.full_snapshots else window.snapshot(0, slots=False)
            ).to_dict(),
            prompt=prompt,
            user_slot_id=user_slot.id,
            reply_slot_id=reply_slot_id,
            provider_errors=errors,
        )

    async def _gather_context(
        self, messages: list[Message], errors: list[str]
    ) -> list[tuple[ContextProvider, Slot]]:
        """Slots from every provider, in provider order; failures become ``tool_log`` slots."""
        results = await asyncio.gather(
            *(p.get_relevant_context(list(messages)) for p in self.providers),
            return_exceptions=True,
        )
        slots: list[tuple[ContextProvider, Slot]] = []
        for provider, result in zip(self.providers, results, strict=True):
            if isinstance(result, BaseException):
                if not isinstance(result, Exception):
                    raise result
                errors.append(provider.name)
                slots.append((provider, _failure_slot(provider, "get_relevant_context", result)))
            elif isinstance(result, ProvidedContext):
                slots += [(provider, slot) for slot in _slots_from(provider, result)]
            elif result is not None:
                errors.append(provider.name)
                wrong = TypeError(f"returned {type(result).__name__}, not ProvidedContext")
                slots.append((provider, _failure_slot(provider, "get_relevant_context", wrong)))
        return slots


_ROLE_OF = {SlotKind.USER: "user", SlotKind.AGENT: "assistant"}


def history_from_window(window: ContextWindow) -> list[Message]:
    """The conversation recorded in ``window``'s log as messages, oldest first."""
    return [
        Message(_ROLE_OF[slot.kind], slot.text, {"slot_id": slot.id, **slot.metadata})
        for slot in window.log
        if slot.kind in _ROLE_OF and slot.state not in (SlotState.MERGED, SlotState.REFUSED)
    ]


def _slots_from(provider: ContextProvider, context: ProvidedContext) -> list[Slot]:
    out = [
        slot.copy(
            id=new_id(),
            pinned=False,
            state=SlotState.ACTIVE,
            seq=-1,
            tokens=0,
            repeat_count=1,
            metadata={**slot.metadata, "provider": provider.name, "provided_id": slot.id},
        )
        for slot in context.slots
    ]
    if context.instructions and context.instructions.strip():
        out.append(
            Slot(
                SlotKind.MEMORY,
                context.instructions.strip(),
                source_id=f"provider:{provider.name}",
                metadata={"provider": provider.name, "instructions": True},
            )
        )
    return out


def _failure_slot(provider: ContextProvider, hook: str, exc: BaseException) -> Slot:
    return Slot(
        SlotKind.TOOL_LOG,
        f"{provider.name}.{hook} failed: {type(exc).__name__}: {exc}",
        source_id=f"provider:{provider.name}",
        metadata={"provider": provider.name, "hook": hook, "error": type(exc).__name__},
    )


def default_window(settings: Settings) -> ContextWindow:
    """A window configured from ``settings``: budget, encoding, embedder, dedup threshold and
    the default funnel (``DropBelow(drop_below)``, ``Summarize(keep_recent)``,
    ``EvictLowestPriority``). The embedder loads lazily on the first semantic check."""
    from smartctx.core import get_counter, get_embedder
    from smartctx.window import ContextWindow, DropBelow, EvictLowestPriority, Summarize

    return ContextWindow(
        settings.budget,
        counter=get_counter(settings.token_encoding),
        embedder=get_embedder(settings.embedder),
        dedup_threshold=settings.dedup_threshold,
        funnel=[
            DropBelow(settings.drop_below),
            Summarize(keep_recent=settings.keep_recent),
            EvictLowestPriority(),
        ],
        recall_ratio=settings.recall_ratio,
    )
