"""The Microsoft Agent Framework adapter, with a deterministic chat client of its own."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from smartctx.agents import (
    ContextProvider,
    GroundedResponder,
    LongTermMemoryProvider,
    Message,
    ProvidedContext,
    as_agent_framework_provider,
    maf,
)
from smartctx.core import MissingDependency

af = pytest.importorskip("agent_framework")


class GroundedClient(af.BaseChatClient):  # type: ignore[misc]
    """A chat client that answers with smartctx's offline GroundedResponder."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[list[tuple[str, str]]] = []

    async def _inner_get_response(
        self, *, messages: Sequence[Any], stream: bool, options: Mapping[str, Any], **kwargs: Any
    ) -> Any:
        chat = [(str(m.role), str(m.text)) for m in messages]
        self.seen.append(chat)
        reply = GroundedResponder().respond([{"role": r, "content": t} for r, t in chat])
        return af.ChatResponse(messages=[af.Message(role="assistant", contents=[reply])])


class Failing(ContextProvider):
    async def get_relevant_context(self, messages: list[Message]) -> ProvidedContext | None:
        raise RuntimeError("offline")

    async def on_new_messages(self, messages: list[Message]) -> None:
        raise RuntimeError("offline")


async def test_recalled_fact_reaches_the_agent_framework_chat_client() -> None:
    memory = LongTermMemoryProvider("alice")
    await memory.remember("My employee number is 48213.", thread="an-earlier-chat")
    client = GroundedClient()
    agent = af.Agent(client=client, context_providers=[as_agent_framework_provider(memory)])
    session = agent.create_session()

    response = await agent.run("What is my employee number?", session=session)

    (item,) = await memory.items()
    assert f"[source: mem:{item.id}] My employee number is 48213." in dict(
        (t, r) for r, t in client.seen[0]
    )
    # the model sees where the fact came from; the reply never shows the memory's id
    assert response.text == "Your employee number is 48213."

    await agent.run("I prefer green tea.", session=session)  # after_run stores new facts
    assert "I prefer green tea." in [i.text for i in await memory.items()]


async def test_a_failing_provider_never_fails_the_run() -> None:
    client = GroundedClient()
    agent = af.Agent(client=client, context_providers=[as_agent_framework_provider(Failing())])
    response = await agent.run("Repeat after me: still here")
    assert response.text == "still here"


def test_source_id_defaults_to_the_provider_name() -> None:
    adapter = as_agent_framework_provider(LongTermMemoryProvider("a"))
    assert isinstance(adapter, af.ContextProvider)
    assert adapter.source_id == "smartctx:memory"
    assert as_agent_framework_provider(Failing(), source_id="x").source_id == "x"


def test_missing_package_names_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    maf._adapter_class.cache_clear()
    monkeypatch.setitem(sys.modules, "agent_framework", None)
    monkeypatch.delitem(sys.modules, "smartctx.agents._maf_provider", raising=False)
    try:
        with pytest.raises(MissingDependency, match=r"pip install 'smartctx\[agent-framework\]'"):
            as_agent_framework_provider(Failing())
    finally:
        maf._adapter_class.cache_clear()
