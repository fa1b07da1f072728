"""Multi-turn memory over A2A (real HTTP, a2a-sdk client): shared within a context, separate
across contexts, identical over JSON-RPC and HTTP+JSON, and kept across a restart."""

from __future__ import annotations

from collections.abc import Callable

from smartctx.agents import FunctionModel
from smartctx.agents.models import ChatMessages
from smartctx.core import Settings
from smartctx.service.client import SmartctxClient, smartctx_options
from smartctx.service.server import ServerHandle
from smartctx.service.windows import options_from_metadata
from smartctx.service.wire import camel_keys, snake_keys

StartServer = Callable[..., ServerHandle]


def recording_model(seen: list[ChatMessages]) -> FunctionModel:
    """A model that records every prompt and answers with the number of messages it saw."""

    def reply(messages: ChatMessages) -> str:
        seen.append([dict(m) for m in messages])
        return f"reply {len(seen)}"

    return FunctionModel(reply)


def _texts(messages: ChatMessages) -> str:
    return "\n".join(m["content"] for m in messages)


async def test_two_turns_in_one_context_share_memory(start_server: StartServer) -> None:
    seen: list[ChatMessages] = []
    # without cross-thread memory, so what crosses contexts is only what the windows hold
    # (memory across contexts: tests/service/test_service_cross_thread.py)
    handle = start_server(model=recording_model(seen), memory=False)
    async with SmartctxClient(handle.url, owner="default") as client:
        first = await client.send("My badge number is 4471.")
        second = await client.send("What was my badge number?", context_id=first.context_id)
        other = await client.send("What was my badge number?")
    assert first.text == "reply 1" and second.text == "reply 2"
    assert second.context_id == first.context_id
    assert "My badge number is 4471." in _texts(seen[1])
    assert "reply 1" in _texts(seen[1])
    assert other.context_id != first.context_id
    assert "4471" not in _texts(seen[2])
    assert second.snapshot["counts"]["user"] == 2
    assert other.snapshot["counts"]["user"] == 1
    assert second.snapshot["version"] == first.snapshot["version"] + 1
    assert first.events[0]["kind"] == "admitted"
    assert first.events[0]["slot_kind"] == "user"


async def test_reply_carries_events_and_compact_snapshot(server: ServerHandle) -> None:
    async with SmartctxClient(server.url, owner="default") as client:
        reply = await client.send("How do I connect to the VPN?")
        snapshot = await client.snapshot(reply.context_id)
    assert reply.state == "completed"
    assert "vpn" in reply.text.lower()
    kinds = [e["slot_kind"] for e in reply.events if e["kind"] == "admitted"]
    assert kinds[0] == "user" and "rag_doc" in kinds and "tool_log" in kinds
    assert kinds[-1] == "agent"
    assert all(
        e["source_id"].startswith("kb:") for e in reply.events if e.get("slot_kind") == "rag_doc"
    )
    assert reply.snapshot["tokens_used"] == snapshot["tokens_used"] <= reply.snapshot["budget"]
    assert reply.snapshot["counts"] == {k: v["count"] for k, v in snapshot["kinds"].items()}


async def test_jsonrpc_and_rest_give_the_same_result(server: ServerHandle) -> None:
    results = []
    for transport in ("jsonrpc", "rest"):
        # one owner per transport: an owner's contexts share long-term memory
        async with SmartctxClient(server.url, transport=transport, owner=transport) as client:
            first = await client.send("How do I reset my password?")
            second = await client.send("Thanks!", context_id=first.context_id)
            results.append((first, second))
    (rpc1, rpc2), (rest1, rest2) = results
    assert rpc1.context_id != rest1.context_id
    assert (rpc1.text, rpc2.text) == (rest1.text, rest2.text)
    assert rpc2.snapshot == rest2.snapshot
    assert [(e["kind"], e.get("slot_kind")) for e in rpc2.events] == [
        (e["kind"], e.get("slot_kind")) for e in rest2.events
    ]


async def test_memory_survives_a_restart_on_the_same_database(start_server: StartServer) -> None:
    seen: list[ChatMessages] = []
    first_server = start_server(model=recording_model(seen))
    async with SmartctxClient(first_server.url, owner="default") as client:
        first = await client.send("Remember the code word: pelican.")
        before = await client.snapshot(first.context_id)
    first_server.stop()

    second_server = start_server(model=recording_model(seen))
    assert second_server.url != first_server.url
    async with SmartctxClient(second_server.url, owner="default") as client:
        after = await client.snapshot(first.context_id)
        again = await client.send("What is the code word?", context_id=first.context_id)
    assert after["slots"] == before["slots"]
    assert after["version"] == before["version"]
    assert "pelican" in _texts(seen[-1])
    # the window keeps the last exchange (turn focus); the log has both
    assert again.snapshot["counts"]["user"] == 1
    assert again.snapshot["log_size"] > before["log_size"]


async def test_context_options_on_the_first_message(server: ServerHandle) -> None:
    meta = {"smartctx": {"preset": "compression", "budget": 150}}
    async with SmartctxClient(server.url, owner="default") as client:
        reply = await client.send("Hello Server!", metadata=meta)
        later = await client.send(
            "Hello again",
            context_id=reply.context_id,
            metadata={"smartctx": {"preset": "eviction", "budget": 9999}},
        )
        described = await client.contexts()
    assert reply.snapshot["budget"] == 150
    assert later.snapshot["budget"] == 150
    assert [(c["preset"], c["budget"]) for c in described] == [("compression", 150)]


async def test_owners_do_not_see_each_other(server: ServerHandle) -> None:
    async with SmartctxClient(server.url, owner="alice") as alice:
        mine = await alice.send("Alice's secret is 42.")
    async with SmartctxClient(server.url, owner="bob") as bob:
        assert await bob.contexts() == []
        theirs = await bob.send("What is the secret?", context_id=mine.context_id)
    assert theirs.snapshot["counts"]["user"] == 1
    async with SmartctxClient(server.url, owner="alice") as alice:
        assert (await alice.snapshot(mine.context_id))["kinds"]["user"]["count"] == 1


def test_wire_keys_round_trip_and_options_accept_both_cases() -> None:
    info = {"prompt_tokens": 3, "snapshot": {"tokens_used": 1}, "events": [{"slot_kind": "u"}]}
    wire = camel_keys(info)
    assert wire == {"promptTokens": 3, "snapshot": {"tokensUsed": 1}, "events": [{"slotKind": "u"}]}
    assert snake_keys(wire) == info
    assert smartctx_options(system_prompt="x", budget=None) == {"smartctx": {"systemPrompt": "x"}}
    settings = Settings(_env_file=None)
    camel = options_from_metadata(settings, {"smartctx": {"keepRecent": 2, "systemPrompt": "s"}})
    snake = options_from_metadata(settings, {"smartctx": {"keep_recent": 2, "system_prompt": "s"}})
    assert camel == snake and camel is not None and camel.keep_recent == 2
