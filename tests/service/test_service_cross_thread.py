"""Cross-thread memory over A2A (real HTTP, the a2a-sdk client): what an owner says in one
context is recalled in the owner's other contexts, never in another owner's; default-preset
windows recall their own archived slots; forgetting the owner empties the memory store."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from smartctx.agents.grounded import NO_INFORMATION
from smartctx.service.client import SmartctxClient
from smartctx.service.owner import OWNER_HEADER as OWNER
from smartctx.service.server import ServerHandle

StartServer = Callable[..., ServerHandle]
QUESTION = "What is my employee number?"


def _memory_rows(db_url: str, owner: str) -> int:
    path = db_url.removeprefix("sqlite+aiosqlite:///")
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT count(*) FROM agent_memory WHERE owner = ?", (owner,)).fetchone()
    return int(row[0])


async def test_an_owner_s_new_context_recalls_what_it_said_elsewhere(
    start_server: StartServer,
) -> None:
    server = start_server(kb_top_k=0)  # no knowledge base: only memory can answer
    async with SmartctxClient(server.url, owner="dana") as dana:
        before = await dana.send(QUESTION)
        await dana.send("My employee number is 48213.", context_id=before.context_id)
        later = await dana.send(QUESTION)  # a new context of the same owner
    async with SmartctxClient(server.url, owner="eve") as eve:
        stranger = await eve.send(QUESTION)
    assert before.text == NO_INFORMATION
    assert later.context_id != before.context_id
    assert "48213" in later.text
    memory = [e for e in later.events if e["kind"] == "admitted" and e["slot_kind"] == "memory"]
    assert memory and all(e["source_id"].startswith("mem:") for e in memory)
    assert later.snapshot["counts"]["user"] == 1  # recalled, not copied from the other window
    assert "48213" not in stranger.text
    assert not any(str(e.get("source_id", "")).startswith("mem:") for e in stranger.events)


async def test_memory_can_be_turned_off(start_server: StartServer) -> None:
    handle = start_server(memory=False)
    async with SmartctxClient(handle.url, owner="dana") as dana:
        await dana.send("My employee number is 48213.")
        later = await dana.send(QUESTION)
    assert "48213" not in later.text
    assert handle.app.owner_memory is None


async def test_other_presets_keep_exactly_their_window(server: ServerHandle) -> None:
    options = {"smartctx": {"preset": "eviction", "budget": 2000}}
    async with SmartctxClient(server.url, owner="dana") as dana:
        await dana.send("My employee number is 48213.")
        later = await dana.send(QUESTION, metadata=options)
    assert "48213" not in later.text
    assert not any(str(e.get("source_id", "")).startswith("mem:") for e in later.events)


def test_default_windows_get_a_recaller_others_do_not(server: ServerHandle) -> None:
    registry = server.app.registry
    default = registry.factory.new(registry.options())
    eviction = registry.factory.new(registry.options(preset="eviction"))
    assert default.recaller is not None
    assert eviction.recaller is None


async def test_archived_slots_of_the_thread_are_recalled(start_server: StartServer) -> None:
    handle = start_server(kb_top_k=0)
    fact = "The staging database password rotates every ninety days."
    filler = [
        f"Note {i}: the quarterly review covers topic number {i} in detail." for i in range(8)
    ]
    async with SmartctxClient(handle.url, owner="finn") as finn:
        created = await finn.create_context("recall-ctx", budget=260, system_prompt="")
        cid = created["context_id"]
        await finn.send(fact, context_id=cid)
        for text in filler:
            await finn.send(text, context_id=cid)
        asked = await finn.send(
            "How often does the staging database password rotate?", context_id=cid
        )
    recalled = [e for e in asked.events if e["kind"] == "recalled"]
    assert recalled, asked.events
    assert "ninety days" in asked.text


async def test_an_archived_introduction_answers_who_am_i(start_server: StartServer) -> None:
    # "Who am I?" is searched as "What is my name?"; the introduction, long out of the window,
    # comes back (its search key holds the name it states: test_agents_loop)
    handle = start_server(kb_top_k=0)
    filler = [f"Note {i}: my review covers my topic number {i} in detail." for i in range(20)]
    async with SmartctxClient(handle.url, owner="priya") as priya:
        created = await priya.create_context("intro-ctx", budget=260, system_prompt="")
        cid = created["context_id"]
        await priya.send("Hi, I'm Priya and I work in finance.", context_id=cid)
        for text in filler:
            await priya.send(text, context_id=cid)
        asked = await priya.send("Who am I?", context_id=cid)
    assert any(e["kind"] == "recalled" for e in asked.events), asked.events
    assert "Priya" in asked.text


@pytest.mark.parametrize("hooks", [[], None])  # long-term memory alone; with personal memory
async def test_a_new_context_knows_who_the_user_is_and_what_they_said(
    start_server: StartServer, hooks: list[Any] | None
) -> None:
    handle = start_server(kb_top_k=0, hooks=hooks)
    async with SmartctxClient(handle.url, owner="priya") as priya:
        first = await priya.send("Hi, I'm Priya and I work in finance.")
        await priya.send("My desk is 4B.", context_id=first.context_id)
        who = await priya.send("Who am I?")  # each in a new context
        known = await priya.send("What do you know about me?")
    assert "Your name is Priya" in who.text and "desk" not in who.text
    assert "Priya" in known.text and "finance" in known.text and "Your desk is 4B" in known.text


async def test_forget_owner_empties_the_memory_store(
    start_server: StartServer, db_url: str
) -> None:
    handle = start_server(hooks=None)  # personal memory (and its forget API) on
    async with SmartctxClient(handle.url, owner="gil") as gil:
        await gil.send("My employee number is 48213.")
    assert _memory_rows(db_url, "gil") >= 1
    async with httpx.AsyncClient(base_url=handle.url, headers={OWNER: "gil"}) as http:
        answer = await http.delete("/memory/owners/gil")
    assert answer.status_code == 200, answer.text
    assert answer.json()["deleted"]["agent_memory"] >= 1
    assert _memory_rows(db_url, "gil") == 0
    async with SmartctxClient(handle.url, owner="gil") as gil:
        later = await gil.send(QUESTION)
    assert "48213" not in later.text


async def test_confirmed_profile_items_reach_the_turns_they_bear_on(
    start_server: StartServer,
) -> None:
    handle = start_server(hooks=None, kb_top_k=0)
    async with httpx.AsyncClient(base_url=handle.url, headers={OWNER: "ivy"}) as http:
        answer = await http.post(
            "/memory/owners/ivy/profile/suggestion",
            json={"suggestion": "안방 청정을 시작할까요?", "accepted": True},
        )
        assert answer.status_code == 200, answer.text
        confirmed = (await http.get("/memory/owners/ivy/profile?status=confirmed")).json()
    items = confirmed["items"] if isinstance(confirmed, dict) else confirmed
    assert items, confirmed
    async with SmartctxClient(handle.url, owner="ivy") as ivy:
        chatter = await ivy.send("Hello there, how are you today?")
        related = await ivy.send("안방 청정 시작해줘")
    profile = {f"profile:{item['id']}" for item in items}

    def memory_sources(events: list[dict[str, object]]) -> set[object]:
        return {e.get("source_id") for e in events if e.get("slot_kind") == "memory"}

    assert not profile & memory_sources(chatter.events), chatter.events  # relevant recall only
    assert profile & memory_sources(related.events), related.events


async def test_each_question_of_a_message_counts_here_and_in_the_owner_s_other_contexts(
    start_server: StartServer,
) -> None:
    server = start_server(kb_top_k=0)
    both = "Did you ask me anything before? What did I tell you about my team?"
    async with SmartctxClient(server.url, owner="dana") as dana:
        said = await dana.send("I work on the payments team in Berlin.")
        here = await dana.send(both, context_id=said.context_id)
        elsewhere = await dana.send(both)  # a new context of the same owner
    assert here.text == "You work on the payments team in Berlin."
    assert elsewhere.context_id != said.context_id
    # from long-term memory, whose item ids are never shown to the user
    assert elsewhere.text == here.text
