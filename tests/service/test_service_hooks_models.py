"""Turn hooks and chat models behind the A2A executor (real HTTP)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from smartctx.agents import OpenAIChatModel
from smartctx.agents.testing import OpenAICompatibleTestServer
from smartctx.core import Slot, SlotKind
from smartctx.service.client import SmartctxClient
from smartctx.service.executor import MEMORY_RULE
from smartctx.service.hooks import TurnContext
from smartctx.service.server import ServerHandle

StartServer = Callable[..., ServerHandle]


class RecordingHook:
    extension_uri = "https://example.test/memory/v1"

    def __init__(self) -> None:
        self.turns: list[TurnContext] = []

    async def before_turn(self, turn: TurnContext) -> None:
        turn.slots.append(Slot(SlotKind.MEMORY, "The user prefers short answers.", source_id="m:1"))
        turn.planner_input = f"Current request: {turn.user_text}"

    async def after_turn(self, turn: TurnContext) -> dict[str, Any]:
        self.turns.append(turn)
        return {self.extension_uri: {"stored": True, "reply": turn.reply}}


async def test_hooks_add_memory_and_metadata(start_server: StartServer) -> None:
    hook = RecordingHook()
    with OpenAICompatibleTestServer(reply=lambda messages: f"saw {len(messages)}") as llm:
        handle = start_server(hooks=[hook], model=OpenAIChatModel(llm.base_url, "test-model"))
        async with SmartctxClient(handle.url, owner="alice") as client:
            reply = await client.send("Hi there", metadata={"device": "watch"})
            snapshot = await client.snapshot(reply.context_id)
        sent = llm.chat_requests[0].json["messages"]
    assert reply.metadata[hook.extension_uri] == {"stored": True, "reply": reply.text}
    assert "smartctx" in reply.metadata
    turn = hook.turns[0]
    assert (turn.owner, turn.context_id, turn.user_text) == ("alice", reply.context_id, "Hi there")
    assert turn.metadata == {"device": "watch"}
    # the hook's memory served this turn (sent below) and left the window when it ended
    assert not [s for s in snapshot["slots"] if s["kind"] == "memory"]
    assert snapshot["log_size"] > len(snapshot["slots"])
    assert [m["role"] for m in sent] == ["system", "user"]  # one system message
    assert "Current request" not in sent[0]["content"]  # the planner input is not sent
    assert MEMORY_RULE in sent[0]["content"]
    assert sent[0]["content"].index(MEMORY_RULE) < sent[0]["content"].index("[source: m:1]")


async def test_openai_compatible_model_over_loopback(start_server: StartServer) -> None:
    replies = iter(["Open GlobalProtect and connect to vpn.example.com.", "Then sign in."])
    with OpenAICompatibleTestServer(reply=lambda _messages: next(replies)) as llm:
        handle = start_server(llm_base_url=llm.base_url, llm_model="test-model")
        async with SmartctxClient(handle.url) as client:
            first = await client.send("How do I connect to the VPN?")
            second = await client.send("and then?", context_id=first.context_id)
        requests = llm.chat_requests
    assert first.text == "Open GlobalProtect and connect to vpn.example.com."
    assert second.text == "Then sign in."
    assert len(requests) == 2
    body = requests[1].json
    assert body["model"] == "test-model"
    pairs = [(m["role"], m["content"]) for m in body["messages"]]
    assert ("user", "How do I connect to the VPN?") in pairs
    assert ("assistant", first.text) in pairs
    assert pairs[-1] == ("user", "and then?") or ("user", "and then?") in pairs
    # the follow-up names nothing to search for: the evidence of the exchange it follows is in
    # the prompt (the knowledge base is searched with the message before it; the previous
    # turn's knowledge left the window when this turn began)
    assert any(
        "[source: kb:vpn.md" in content or "[recalled from: kb:vpn.md" in content
        for _, content in pairs
    )


async def test_a_failing_model_fails_the_task_and_stores_nothing(
    start_server: StartServer,
) -> None:
    with OpenAICompatibleTestServer() as llm:
        handle = start_server(llm_base_url=llm.base_url)
        async with SmartctxClient(handle.url) as client:
            ok = await client.send("Hello")
            before = await client.snapshot(ok.context_id)
            llm.enqueue(500, {"error": {"message": "boom"}})
            failed = await client.send("Hello again", context_id=ok.context_id)
            after = await client.snapshot(ok.context_id)
    assert failed.state == "failed"
    assert "upstream_error" in failed.text
    assert after == before


async def test_history_formatter_rewrites_the_prompt(start_server: StartServer) -> None:
    def fold(messages: list[dict[str, str]]) -> list[dict[str, str]]:
        return [{"role": "user", "content": " | ".join(m["content"] for m in messages)}]

    with OpenAICompatibleTestServer() as llm:
        handle = start_server(llm_base_url=llm.base_url, history_formatter=fold)
        async with SmartctxClient(handle.url) as client:
            reply = await client.send("Good morning")
        sent = llm.chat_requests[0].json["messages"]
    assert len(sent) == 1 and sent[0]["role"] == "user"
    assert sent[0]["content"].startswith("You are the smartctx helpdesk assistant.")
    assert sent[0]["content"].endswith(" | Good morning")  # tool logs sit in the system part
    assert reply.text == f"echo: {sent[0]['content']}"


async def test_with_a_model_configured_the_served_funnel_writes_abstractive_summaries(
    start_server: StartServer,
) -> None:
    from smartctx.agents.llm_summary import PROMPT as SUMMARY_PROMPT
    from smartctx.service.client import smartctx_options

    def reply(messages: list[dict[str, str]]) -> str:
        if messages[0]["content"].startswith(SUMMARY_PROMPT[:40]):
            return "Priya of the Platform team sits in room 4B."
        if messages[0]["content"].startswith("You maintain a user's long-term memory"):
            return '{"operations": []}'
        return f"Noted ({len(messages)})."

    facts = [
        "Hello, I am Priya from the Platform team.",
        "My desk is in room 4B on the second floor.",
        "I work from Lisbon on Fridays.",
        "Our release moved to March 14.",
        "The printer on my floor jams a lot.",
    ]
    with OpenAICompatibleTestServer(reply=reply) as llm:
        handle = start_server(llm_base_url=llm.base_url, llm_model="test-model")
        options = smartctx_options(preset="compression", budget=120, system_prompt="Be brief.")
        async with SmartctxClient(handle.url, owner="priya") as client:
            first = await client.send(facts[0], metadata=options)
            for text in facts[1:]:
                await client.send(text, context_id=first.context_id)
            snapshot = await client.snapshot(first.context_id)
    summaries = [s for s in snapshot["slots"] if s["kind"] == "summary"]
    assert summaries, snapshot["slots"]
    assert any("Priya of the Platform team" in s["text"] for s in summaries)


async def test_the_log_route_pages_every_slot_archived_ones_included(
    start_server: StartServer,
) -> None:
    import httpx

    handle = start_server()
    async with SmartctxClient(handle.url, owner="lena") as client:
        first = await client.send("How do I connect to the VPN?")
        await client.send("How many vacation days do I get?", context_id=first.context_id)
    headers = {"X-Smartctx-Owner": "lena"}
    async with httpx.AsyncClient(base_url=handle.url, headers=headers) as http:
        page = (await http.get(f"/memory/contexts/{first.context_id}/log?limit=3")).json()
        rest = (await http.get(f"/memory/contexts/{first.context_id}/log?offset=3")).json()
        bad = await http.get(f"/memory/contexts/{first.context_id}/log?limit=0")
        other = await http.get(
            f"/memory/contexts/{first.context_id}/log", headers={"X-Smartctx-Owner": "max"}
        )
    slots = page["slots"] + rest["slots"]
    assert page["total"] == len(slots) and [s["seq"] for s in slots] == list(range(len(slots)))
    # the first question's knowledge left the window when the second turn began, and is logged
    assert any(s["kind"] == "rag_doc" and s["state"] == "evicted" for s in slots)
    assert bad.status_code == 400 and other.status_code == 404
