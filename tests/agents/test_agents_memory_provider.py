"""Long-term memory: fact extraction, relevance threshold, isolation, persistence."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from smartctx.agents import (
    InMemoryMemoryStore,
    LongTermMemoryProvider,
    MemoryItem,
    MemoryStore,
    Message,
    SqlMemoryStore,
)
from smartctx.agents.facts import extract_facts
from smartctx.core import HashingEmbedder, InvalidInput, SlotKind
from smartctx.store import Database

POSTGRES = os.environ.get("SMARTCTX_TEST_POSTGRES_URL", "")


def said(text: str, thread: str = "t1") -> list[Message]:
    return [
        Message("user", text, {"thread": thread, "slot_id": f"slot-{thread}"}),
        Message("assistant", "Noted.", {"thread": thread}),
    ]


def asks(text: str, thread: str = "t2") -> list[Message]:
    return [Message("user", text, {"thread": thread})]


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("My employee number is 48213.", ["My employee number is 48213."]),
        ("Hi! Remember that my badge is blue. What is the VPN?", ["My badge is blue."]),
        ("I am allergic to peanuts", ["I am allergic to peanuts"]),
        ("I'm asking about the VPN", []),
        # a trip is a plan to note, "going to" with a verb an intention
        ("I'm going to Berlin next week.", ["I'm going to Berlin next week."]),
        ("I'm going to reset my password", []),
        ("I'm going to the office now", []),
        ("What is my employee number?", []),
        ("Book a meeting room for my team", []),
        ("제 사번은 48213입니다.", ["제 사번은 48213입니다."]),
        ("Notes part 1 on onboarding, keep them in mind: desk rota", []),
        ("Note: my desk is B12.", ["My desk is B12."]),
        # a request to remember after the statement is not part of the fact
        ("I'm allergic to peanuts, remember that", ["I'm allergic to peanuts"]),
        ("My desk is 4B - please note.", ["My desk is 4B."]),
        ("I work in Berlin; don't forget it!", ["I work in Berlin"]),
        ("I love the song Remember", ["I love the song Remember"]),
        # nor a word that only opens it
        ("Actually, my manager is now Tom Berg.", ["My manager is now Tom Berg."]),
        ("By the way my desk is 5C.", ["My desk is 5C."]),
        # German, Spanish, French: a name given, where one works; not a problem reported
        ("Ich arbeite im Hamburger Büro.", ["Ich arbeite im Hamburger Büro."]),
        ("Soy Ana y trabajo en Madrid.", ["Soy Ana y trabajo en Madrid."]),
        ("Je m'appelle Luc.", ["Je m'appelle Luc."]),
        ("Ich habe mein Passwort vergessen.", []),
        ("Je suis bloqué.", []),
        ("Ich bin neu hier.", []),
    ],
)
def test_fact_extraction(text: str, facts: list[str]) -> None:
    assert extract_facts(text) == facts


async def test_recalls_a_fact_in_another_thread_with_its_source() -> None:
    memory = LongTermMemoryProvider("alice")
    await memory.on_new_messages(said("My employee number is 48213."))
    context = await memory.get_relevant_context(asks("What is my employee number?"))
    assert context is not None
    (slot,) = context.slots
    assert slot.kind is SlotKind.MEMORY and slot.text == "My employee number is 48213."
    assert slot.source_id == f"mem:{slot.metadata['memory_id']}"
    assert slot.provenance == ("slot-t1",)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Hi, I'm Dana and I just joined the support team.", "Dana"),
        ("I am Li Wei.", "Li Wei"),
        ("Hello! I'm Sam from accounting.", "Sam"),
        ("Call me Bob.", "Bob"),
        ("I'm German.", None),  # a nationality, not a name
        ("I'm new here.", None),
        ("I'm allergic to nuts.", None),
        ("Since I'm Brian, ok", None),  # not at the start of a sentence or after a greeting
        ("Hi, I'm Tomás and I just joined the sales team.", "Tomás"),  # any script with case
        ("I am Zoë.", "Zoë"),
        ("I'm Ángel García from Madrid.", "Ángel García"),
        ("I'm tired and hungry.", None),
        ("I am OK.", None),
        ("Hallo, ich bin Jonas aus dem Hamburger Büro.", "Jonas"),
        ("Ich heiße Peter.", "Peter"),
        ("Ich bin Entwickler im Team Nord.", None),  # German capitalises every noun
        ("Ich bin Deutscher.", None),
        ("Hola, soy Ana y trabajo en Madrid.", "Ana"),
        ("Soy de Madrid.", None),
        ("Bonjour, je m'appelle Luc, je travaille à Lyon.", "Luc"),
        ("Je suis bloqué.", None),
    ],
)
def test_self_introductions_name_the_user(text: str, name: str | None) -> None:
    from smartctx.agents.facts import introduced_name, name_fact

    assert introduced_name(text) == name
    assert name_fact(text) == (None if name is None else f"My name is {name}.")
    assert name_fact("My name is Dana.") is None  # said so already


async def test_a_self_introduction_answers_what_is_my_name_in_another_thread() -> None:
    memory = LongTermMemoryProvider("alice")
    await memory.on_new_messages(said("Hi, I'm Dana and I just joined the support team."))
    context = await memory.get_relevant_context(asks("What is my name?"))
    assert context is not None
    assert context.slots[0].text == "My name is Dana."


async def test_unrelated_items_are_not_recalled() -> None:
    memory = LongTermMemoryProvider("alice")
    await memory.on_new_messages(said("My employee number is 48213."))
    await memory.on_new_messages(said("I prefer tea over coffee."))
    assert await memory.get_relevant_context(asks("How do I connect to the VPN?")) is None
    context = await memory.get_relevant_context(asks("Do I like tea?"))
    assert context is not None and [s.text for s in context.slots] == ["I prefer tea over coffee."]


async def test_items_of_the_asking_thread_are_skipped() -> None:
    memory = LongTermMemoryProvider("alice")
    await memory.on_new_messages(said("My employee number is 48213.", thread="t1"))
    assert await memory.get_relevant_context(asks("my employee number?", thread="t1")) is None


async def test_questions_and_assistant_text_are_not_stored_and_facts_are_deduplicated() -> None:
    memory = LongTermMemoryProvider("alice")
    await memory.on_new_messages(said("What is my employee number?"))
    await memory.on_new_messages([Message("assistant", "My name is Bot.", {})])
    assert await memory.items() == []
    await memory.on_new_messages(said("My employee number is 48213."))
    await memory.on_new_messages(said("my employee number is 48213", thread="t9"))
    assert [(i.kind, i.text) for i in await memory.items()] == [
        ("fact", "My employee number is 48213.")
    ]


async def test_chit_chat_is_not_remembered_but_statements_are() -> None:
    memory = LongTermMemoryProvider("alice")
    await memory.on_new_messages(said("Thanks!"))
    await memory.on_new_messages(said("Okay, great."))
    assert await memory.items() == []
    await memory.on_new_messages(said("Our team offsite is in Porto next spring."))
    assert [i.kind for i in await memory.items()] == ["turn"]


async def test_sensitive_values_are_redacted_before_storage() -> None:
    memory = LongTermMemoryProvider("alice")
    await memory.on_new_messages(said("My card is 4111 1111 1111 1111 and my email is a@b.co"))
    texts = " ".join(i.text for i in await memory.items())
    assert "4111" not in texts and "a@b.co" not in texts
    assert "[REDACTED:card]" in texts


async def test_owners_are_isolated_on_a_shared_store() -> None:
    store = InMemoryMemoryStore()
    alice = LongTermMemoryProvider("alice", store=store)
    bob = LongTermMemoryProvider("bob", store=store)
    await alice.on_new_messages(said("My employee number is 48213."))
    assert await bob.get_relevant_context(asks("What is my employee number?")) is None
    await bob.clear()
    assert len(await alice.items()) == 1
    await alice.clear()
    assert await alice.items() == []
    assert await alice.get_relevant_context(asks("What is my employee number?")) is None


async def test_providers_sharing_a_store_follow_each_others_writes() -> None:
    store = InMemoryMemoryStore()
    reader = LongTermMemoryProvider("alice", store=store)
    assert await reader.get_relevant_context(asks("employee number?")) is None
    await LongTermMemoryProvider("alice", store=store).remember("My employee number is 48213.")
    assert await reader.get_relevant_context(asks("employee number?")) is not None


async def test_embedder_recall_uses_the_similarity_threshold() -> None:
    memory = LongTermMemoryProvider("alice", embedder=HashingEmbedder(), min_similarity=0.99)
    await memory.remember("My employee number is 48213.")
    assert await memory.get_relevant_context(asks("employee number")) is not None
    assert await memory.get_relevant_context(asks("weather in Paris")) is None


def test_constructor_checks_its_arguments() -> None:
    with pytest.raises(InvalidInput):
        LongTermMemoryProvider("")
    from smartctx.retrieval import HybridIndex

    with pytest.raises(InvalidInput):
        LongTermMemoryProvider("a", index=HybridIndex(), embedder=HashingEmbedder())


async def _contract(store: MemoryStore, owner_a: str = "alice", owner_b: str = "bob") -> None:
    one = MemoryItem(id="i1", owner=owner_a, kind="fact", text="A", thread="t", provenance=("s",))
    two = MemoryItem(id="i2", owner=owner_a, kind="turn", text="B")
    other = MemoryItem(id="i1", owner=owner_b, kind="fact", text="C")
    stored = await store.add([one, two, other])
    assert [i.id for i in stored] == ["i1", "i2", "i1"]
    assert stored[0].seq < stored[1].seq < stored[2].seq
    assert await store.add([one]) == []  # idempotent by (owner, id)
    alice = await store.since(owner_a, 0)
    assert [(i.id, i.text, i.provenance) for i in alice] == [("i1", "A", ("s",)), ("i2", "B", ())]
    assert [i.id for i in await store.since(owner_a, alice[0].seq)] == ["i2"]
    assert await store.count(owner_a) == 2
    assert await store.state(owner_a) == (2, alice[1].seq)
    assert await store.clear(owner_a) == 2
    assert await store.state(owner_a) == (0, 0)
    assert await store.since(owner_a, 0) == [] and await store.count(owner_a) == 0
    assert [i.text for i in await store.since(owner_b, 0)] == ["C"]


async def test_in_memory_store_contract() -> None:
    await _contract(InMemoryMemoryStore())


def test_stores_are_personal_memory_forgetters() -> None:
    from smartctx.memory.forget import Forgetter

    assert isinstance(InMemoryMemoryStore(), Forgetter)
    assert isinstance(SqlMemoryStore(Database("sqlite+aiosqlite:///:memory:")), Forgetter)


async def test_sql_store_contract(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'mem.db'}")
    await db.migrate()
    try:
        await _contract(SqlMemoryStore(db))
    finally:
        await db.close()


@pytest.mark.skipif(not POSTGRES, reason="SMARTCTX_TEST_POSTGRES_URL is not set")
async def test_sql_store_contract_on_postgresql() -> None:
    """On PostgreSQL an add is one statement (JSON rows, ON CONFLICT DO NOTHING): the same
    contract, including the order of seq, duplicates in one batch and owner isolation."""
    db = Database(POSTGRES)
    await db.migrate()
    run = uuid.uuid4().hex[:8]
    try:
        store = SqlMemoryStore(db)
        await _contract(store, f"alice-{run}", f"bob-{run}")
        twice = MemoryItem(id="d", owner=f"carol-{run}", kind="fact", text='Ünïcode "quoted"')
        stored = await store.add([twice, twice])
        assert [(i.id, i.text) for i in stored] == [("d", twice.text)]
        await store.clear(f"bob-{run}")
        await store.clear(f"carol-{run}")
    finally:
        await db.close()


async def test_memory_survives_a_restart(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'smartctx.db'}"
    db = Database(url)
    await db.migrate()
    await LongTermMemoryProvider("alice", store=SqlMemoryStore(db)).on_new_messages(
        said("My employee number is 48213.")
    )
    await db.close()

    reopened = Database(url)
    await reopened.migrate()
    try:
        memory = LongTermMemoryProvider("alice", store=SqlMemoryStore(reopened))
        context = await memory.get_relevant_context(asks("What is my employee number?"))
        assert context is not None and "48213" in context.slots[0].text
    finally:
        await reopened.close()


async def test_sql_seq_is_never_reused_after_a_clear(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'seq.db'}")
    await db.migrate()
    try:
        store = SqlMemoryStore(db)
        (first,) = await store.add([MemoryItem(id="a", owner="alice", kind="fact", text="A")])
        await store.add([MemoryItem(id="b", owner="bob", kind="fact", text="B")])
        assert await store.clear("bob") == 1
        (third,) = await store.add([MemoryItem(id="c", owner="alice", kind="fact", text="C")])
        assert third.seq == first.seq + 2
    finally:
        await db.close()


async def test_forgetting_through_the_store_stops_recall_everywhere() -> None:
    store = InMemoryMemoryStore()
    memory = LongTermMemoryProvider("alice", store=store)
    await memory.remember("My employee number is 48213.")
    assert await memory.get_relevant_context(asks("employee number?")) is not None
    assert store.name == "agent_memory" and await store.forget_owner("alice") == 1
    assert await memory.get_relevant_context(asks("employee number?")) is None
    assert await memory.items() == []


async def _forget_items(store: InMemoryMemoryStore | SqlMemoryStore) -> None:
    await store.add(
        [
            MemoryItem(id="a", owner="alice", kind="fact", text="My code is 1"),
            MemoryItem(id="b", owner="alice", kind="fact", text="My badge is blue"),
            MemoryItem(id="c", owner="bob", kind="fact", text="My code is 1"),
        ]
    )
    gone = await store.forget_items("alice", lambda item: "code" in item.text)
    assert [i.id for i in gone] == ["a"]
    assert [i.id for i in await store.since("alice", 0)] == ["b"]
    assert [i.id for i in await store.since("bob", 0)] == ["c"]
    assert await store.forget_items("alice", lambda item: False) == []
    (again,) = await store.add([MemoryItem(id="a", owner="alice", kind="fact", text="x")])
    assert again.id == "a"  # a forgotten id may be stored again


async def test_forget_items_deletes_only_matching_items_of_the_owner(tmp_path: Path) -> None:
    await _forget_items(InMemoryMemoryStore())
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'forget.db'}")
    await db.migrate()
    try:
        await _forget_items(SqlMemoryStore(db))
    finally:
        await db.close()


async def test_a_changed_fact_supersedes_the_old_one_which_stays_in_the_audit() -> None:
    from smartctx.agents import LongTermMemoryProvider

    memory = LongTermMemoryProvider("dana")
    await memory.remember("My desk is in 4B.", thread="t1")
    await memory.remember("My desk moved from 4B to 5C.", thread="t2")
    found = await memory.recall("Where is my desk?", thread="t3")
    assert [item.text for item, _ in found] == ["My desk moved from 4B to 5C."]
    history = await memory.history("desk")
    assert [(h["value"], h["current"]) for h in history] == [("4B", False), ("5C", True)]
    assert history[0]["valid_to"] == history[1]["valid_from"] is not None
    assert history[1]["valid_to"] is None


async def test_chit_chat_and_scaffolding_are_not_remembered() -> None:
    from smartctx.agents import LongTermMemoryProvider

    memory = LongTermMemoryProvider("erin")
    assert await memory.remember("Thanks, hello there!") == []
    assert await memory.remember('Current request (required): {"route_family": "DEF"}') == []
    assert await memory.items() == []
