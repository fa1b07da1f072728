"""The chat shape of a prompt: one system message, strict alternation, current user last,
checked against a chat template as strict as the ones open models ship."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smartctx.agents import Agent, GroundedResponder, Thread
from smartctx.core import HashingEmbedder, Slot, SlotKind, get_counter
from smartctx.window import ContextWindow, EvictLowestPriority
from smartctx.window.chat import EARLIER_ASSISTANT, EARLIER_USER, chat_messages


class TemplateError(Exception):
    pass


def strict_template(messages: list[dict[str, str]]) -> str:
    """What Mistral/Llama-style templates enforce: an optional system message first, then
    user/assistant turns alternating from a user, the last one from the user."""
    if messages and messages[0]["role"] == "system":
        messages = messages[1:]
    if any(m["role"] == "system" for m in messages):
        raise TemplateError("a system message after the first")
    for i, message in enumerate(messages):
        if message["role"] != ("user" if i % 2 == 0 else "assistant"):
            raise TemplateError("Conversation roles must alternate user/assistant/user/...")
    if not messages or messages[-1]["role"] != "user":
        raise TemplateError("the last message must be the user's")
    return "".join(f"<{m['role']}>{m['content']}" for m in messages)


def make(budget: int = 4000, **kwargs: Any) -> ContextWindow:
    return ContextWindow(budget, counter=get_counter(), embedder=HashingEmbedder(), **kwargs)


def test_context_goes_into_one_system_message_in_sections() -> None:
    window = make()
    window.add(Slot(SlotKind.SYSTEM, "You are the helpdesk.", pinned=True))
    window.add(Slot(SlotKind.USER, "first question"))
    window.add(Slot(SlotKind.TOOL_LOG, "kb.search('vpn') -> kb:vpn.md#1", source_id="kb.search"))
    window.add(Slot(SlotKind.RAG_DOC, "VPN needs the client.", source_id="kb:vpn.md#1"))
    window.add(Slot(SlotKind.AGENT, "first answer"))
    window.add(Slot(SlotKind.MEMORY, "User prefers Korean.", source_id="profile:lang"))
    window.add(Slot(SlotKind.USER, "current question", pinned=True))
    chat = window.assemble().chat
    strict_template(chat)
    assert [m["role"] for m in chat] == ["system", "user", "assistant", "user"]
    system = chat[0]["content"]
    assert system.startswith("You are the helpdesk.\n\n## Memory\n[source: profile:lang]")
    assert "## Knowledge\n[source: kb:vpn.md#1] VPN needs the client." in system
    assert system.endswith("## Tool log\n[tool: kb.search] kb.search('vpn') -> kb:vpn.md#1")
    assert chat[-1] == {"role": "user", "content": "current question"}


def test_conversation_that_cannot_alternate_moves_into_the_system_message() -> None:
    def slot(kind: SlotKind, text: str) -> tuple[Slot, str]:
        return Slot(kind, text), text

    entries = [
        slot(SlotKind.SYSTEM, "rules"),
        slot(SlotKind.AGENT, "a reply whose question was evicted"),
        slot(SlotKind.USER, "q1"),
        slot(SlotKind.AGENT, "a1"),
        slot(SlotKind.AGENT, "a1 continued"),
        slot(SlotKind.USER, "q2 whose reply was evicted"),
        slot(SlotKind.USER, "current"),
    ]
    chat = chat_messages(entries)
    strict_template(chat)
    assert chat[1:] == [
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "a1\n\na1 continued"},
        {"role": "user", "content": "current"},
    ]
    system = chat[0]["content"]
    assert f"{EARLIER_ASSISTANT} a reply whose question was evicted" in system
    assert f"{EARLIER_USER} q2 whose reply was evicted" in system


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(list(SlotKind)), min_size=0, max_size=12))
def test_any_window_passes_the_strict_template(kinds: list[SlotKind]) -> None:
    window = make(budget=600, funnel=[EvictLowestPriority()])
    window.add(Slot(SlotKind.SYSTEM, "rules", pinned=True))
    for i, kind in enumerate(kinds):
        if kind is not SlotKind.SYSTEM:
            window.add(Slot(kind, f"{kind.value} number {i} " * 8, source_id=f"src:{i}"))
    window.add(Slot(SlotKind.USER, "the current question", pinned=True))
    chat = window.assemble().chat
    strict_template(chat)
    assert chat[-1]["content"] == "the current question"


@pytest.mark.asyncio
async def test_the_agent_sends_the_chat_shape_over_several_turns() -> None:
    sent: list[list[dict[str, str]]] = []
    responder = GroundedResponder()

    class Strict:
        name = "strict"

        async def complete(
            self, messages: list[dict[str, str]], *, temperature: float | None = None
        ) -> str:
            strict_template(messages)
            sent.append(messages)
            return await responder.complete(messages)

    agent = Agent(Strict())
    thread = Thread(make(budget=300, funnel=[EvictLowestPriority()]), owner="alice")
    thread.window.add(Slot(SlotKind.SYSTEM, "rules", pinned=True))
    for text in [
        "My desk is 5C.",
        "Hello there, how are you today my friend?",
        "Where is my desk?",
    ]:
        await agent.run(text, thread)
    assert len(sent) == 3 and "5C" in (await responder.complete(sent[-1]))


def test_recalled_messages_and_tool_logs_are_never_context_knowledge() -> None:
    entries = [(Slot(SlotKind.SYSTEM, "rules"), "rules"), (Slot(SlotKind.USER, "now"), "now")]
    recalled = [
        (Slot(SlotKind.TOOL_LOG, "kb.search('x') -> kb:a#1", source_id="kb.search"), "t"),
        (Slot(SlotKind.AGENT, "an old reply"), "[recalled from: c:1:reply] an old reply"),
        (Slot(SlotKind.USER, "an old question"), "[recalled from: c:1] an old question"),
        (Slot(SlotKind.RAG_DOC, "A document.", source_id="kb:a#1"), "[recalled from: kb:a#1] A"),
    ]
    system = chat_messages(entries, recalled)[0]["content"]
    assert "## Recalled\n[recalled from: kb:a#1] A" in system
    assert f"{EARLIER_ASSISTANT} an old reply" in system
    assert f"{EARLIER_USER} an old question" in system
    assert "[tool: kb.search] kb.search('x') -> kb:a#1" in system
