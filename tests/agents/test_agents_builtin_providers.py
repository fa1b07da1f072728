"""The knowledge-base and profile providers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from smartctx.agents import (
    NO_INFORMATION,
    Agent,
    GroundedResponder,
    KnowledgeProvider,
    Message,
    PersonalMemoryProfileSource,
    ProfileProvider,
    StaticProfileSource,
    Thread,
)
from smartctx.agents.builtin_providers import with_lead_in
from smartctx.core import HashingEmbedder, InvalidInput, SlotKind
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.window import ContextWindow


@dataclass(frozen=True)
class FakeHit:
    source_id: str
    text: str
    score: float


class FakeKB:
    def __init__(self, hits: list[FakeHit]) -> None:
        self.hits = hits
        self.queries: list[tuple[str, int]] = []

    def search(self, query: str, k: int = 3) -> list[FakeHit]:
        self.queries.append((query, k))
        return self.hits[:k]


def ask(text: str) -> list[Message]:
    return [Message("assistant", "earlier"), Message("user", text)]


async def test_kb_hits_become_rag_docs_and_the_search_is_logged() -> None:
    kb = FakeKB([FakeHit("kb:vpn.md#1", "Open GlobalProtect.", 0.9), FakeHit("kb:x#2", "X", 0.1)])
    context = await KnowledgeProvider(kb, k=2).get_relevant_context(ask("connect to the VPN"))
    assert context is not None
    assert kb.queries == [("connect to the VPN", 2)]
    docs, log = context.slots[:2], context.slots[2]
    assert [(s.kind, s.source_id, s.text) for s in docs] == [
        (SlotKind.RAG_DOC, "kb:vpn.md#1", "Open GlobalProtect."),
        (SlotKind.RAG_DOC, "kb:x#2", "X"),
    ]
    assert (log.kind, log.text) == (
        SlotKind.TOOL_LOG,
        "kb.search('connect to the VPN') -> kb:vpn.md#1, kb:x#2",
    )


async def test_a_follow_up_that_names_nothing_searches_for_the_exchange_it_follows() -> None:
    kb = FakeKB([FakeHit("kb:laptops.md#2", "Report a stolen laptop to security.", 0.9)])
    messages = [
        Message("user", "My laptop was stolen, what should I do?"),
        Message("assistant", "Report it."),
        Message("user", "And who do I tell about it?"),
    ]
    context = await KnowledgeProvider(kb, k=1).get_relevant_context(messages)
    assert context is not None
    assert kb.queries == [
        ("My laptop was stolen, what should I do?\nAnd who do I tell about it?", 1)
    ]
    assert "stolen, what should I do? / And who" in context.slots[-1].text
    await KnowledgeProvider(kb, k=1).get_relevant_context(
        [*messages[:2], Message("user", "Where is the IT desk?")]
    )
    assert kb.queries[-1] == ("Where is the IT desk?", 1)  # it names something: alone


async def test_follow_ups_that_name_nothing_all_search_for_the_threads_topic() -> None:
    kb = FakeKB([FakeHit("kb:laptops.md#2", "Report a lost laptop to security.", 0.9)])
    messages = [
        Message("user", "I lost my laptop on the train"),
        Message("assistant", "Report it."),
        Message("user", "who do I tell?"),
        Message("assistant", "Security."),
        Message("user", "who should I contact?"),
    ]
    await KnowledgeProvider(kb, k=1).get_relevant_context(messages)
    # "contact" is what it asks, not what it is about; the topic is the statement's
    assert kb.queries == [("I lost my laptop on the train\nwho should I contact?", 1)]


class HotelKB(FakeKB):
    """Finds the hotel chunk for a query that says "hotel", nothing otherwise."""

    def search(self, query: str, k: int = 3) -> list[FakeHit]:
        super().search(query, k)
        return self.hits[:k] if "hotel" in query else []


async def test_a_short_follow_up_that_finds_nothing_alone_is_searched_with_the_exchange() -> None:
    kb = HotelKB([FakeHit("kb:expenses.md#1", "Hotels: up to USD 180 (USD 250 in London).", 1)])
    asked = [Message("user", "What is the hotel limit in London?"), Message("assistant", "250")]
    context = await KnowledgeProvider(kb, k=1).get_relevant_context(
        [*asked, Message("user", "and in Paris?")]
    )
    assert context is not None and context.slots[0].source_id == "kb:expenses.md#1"
    assert kb.queries == [
        ("and in Paris?", 1),
        ("What is the hotel limit in London?\nand in Paris?", 1),
    ]
    # a question that says enough by itself is not read with the one before it
    kb.queries.clear()
    await KnowledgeProvider(kb, k=1).get_relevant_context(
        [*asked, Message("user", "What is the dress code at the Paris office?")]
    )
    assert kb.queries == [("What is the dress code at the Paris office?", 1)]


async def test_no_hits_logs_the_search_only() -> None:
    context = await KnowledgeProvider(FakeKB([])).get_relevant_context(ask("weather?"))
    assert context is not None
    (log,) = context.slots
    assert log.text == "kb.search('weather?') -> (no results)"


async def test_no_user_message_or_k_zero_asks_nothing() -> None:
    kb = FakeKB([FakeHit("kb:a#1", "A", 1.0)])
    assert await KnowledgeProvider(kb).get_relevant_context([Message("assistant", "x")]) is None
    assert await KnowledgeProvider(kb, k=0).get_relevant_context(ask("a")) is None
    assert kb.queries == []
    with pytest.raises(InvalidInput):
        KnowledgeProvider(kb, k=-1)


async def test_agent_answers_from_the_shipped_knowledge_base() -> None:
    kb = KnowledgeBase.builtin(embedder=HashingEmbedder())
    agent = Agent(GroundedResponder(), [KnowledgeProvider(kb)])

    def thread() -> Thread:
        from smartctx.core import get_counter

        return Thread(ContextWindow(3000, counter=get_counter(), embedder=HashingEmbedder()))

    result = await agent.run("How many days of annual leave do I get?", thread())
    assert "25 days" in result.reply and "[source: kb:leave.md#" in result.reply
    assert "kb.search(" in result.prompt.text
    unrelated = await agent.run("Book a meeting room for my team", thread())
    assert unrelated.reply == NO_INFORMATION


async def test_when_the_budget_holds_one_document_the_best_ranked_stays() -> None:
    """Hits of one search shared a priority, so eviction took the first admitted, the best:
    at a 600-token budget "How many vacation days do I get?" lost the leave policy to a long,
    less relevant chunk and answered "I don't have that information" (found by using the
    product with a small budget)."""
    from smartctx.core import get_counter

    best = FakeHit("kb:leave.md#1", "Full-time employees have 25 days of paid annual leave.", 0.9)
    long = FakeHit("kb:expense.md#1", "Expense policy text. " * 60, 0.4)
    kb = FakeKB([best, long])
    agent = Agent(GroundedResponder(), [KnowledgeProvider(kb, k=2)])
    window = ContextWindow(150, counter=get_counter(), embedder=HashingEmbedder())
    result = await agent.run("How many days of annual leave do I get?", Thread(window))
    assert "25 days" in result.reply
    kept = [s.source_id for s in window.active if s.kind is SlotKind.RAG_DOC]
    assert "kb:expense.md#1" not in kept


async def test_profile_items_become_memory_slots_for_their_owner_only() -> None:
    source = StaticProfileSource(
        {"alice": [("preferred_language", "Korean", "profile:p1"), ("team", "Infra", "profile:p2")]}
    )
    context = await ProfileProvider(source, "alice").get_relevant_context(ask("hi"))
    assert context is not None
    assert [(s.kind, s.text, s.source_id) for s in context.slots] == [
        (SlotKind.MEMORY, "preferred language: Korean", "profile:p1"),
        (SlotKind.MEMORY, "team: Infra", "profile:p2"),
    ]
    assert not any(s.pinned for s in context.slots)
    assert await ProfileProvider(source, "bob").get_relevant_context(ask("hi")) is None
    limited = await ProfileProvider(source, "alice", limit=1).get_relevant_context(ask("hi"))
    assert limited is not None and len(limited.slots) == 1


async def test_profile_from_personal_memory_shows_confirmed_items_only(tmp_path: Path) -> None:
    from smartctx.core import Settings
    from smartctx.memory import PersonalMemory
    from smartctx.store import Database

    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'profile.db'}")
    await db.migrate()
    try:
        memory = PersonalMemory(db, settings=Settings(_env_file=None))
        source = PersonalMemoryProfileSource(memory)
        provider = ProfileProvider(source, "alice")
        assert await provider.get_relevant_context(ask("hi")) is None
        item = await memory.accept("alice", key="preferred_room", value="living room")
        context = await provider.get_relevant_context(ask("hi"))
        assert context is not None
        assert [(s.text, s.source_id) for s in context.slots] == [
            ("preferred room: living room", f"profile:{item['id']}")
        ]
        await memory.mark_wrong("alice", item["id"])
        assert await provider.get_relevant_context(ask("hi")) is None
        assert await ProfileProvider(source, "bob").get_relevant_context(ask("hi")) is None
    finally:
        await db.close()


@pytest.mark.parametrize(
    ("text", "heading", "expected"),
    [
        (
            "1. Open the app.\n2. Connect.",
            "VPN > Connecting to the VPN",
            "Connecting to the VPN:\n",
        ),
        ("- **No prompt**: refresh.", "VPN > Troubleshooting", "Troubleshooting:\n"),
        ("The VPN gives you access.", "VPN > About", ""),  # prose says what it is about
        ("1. Open the app.", "", ""),  # no section to name
    ],
)
def test_a_chunk_that_opens_with_a_list_is_led_in_by_its_section_title(
    text: str, heading: str, expected: str
) -> None:
    assert with_lead_in(text, heading) == expected + text


async def test_kb_slots_of_real_hits_carry_the_lead_in() -> None:
    kb = KnowledgeBase.builtin(embedder=HashingEmbedder())
    out = await KnowledgeProvider(kb, k=3).get_relevant_context(
        [Message("user", "How do I connect to the VPN with GlobalProtect?")]
    )
    assert out is not None
    texts = {s.source_id: s.text for s in out.slots if s.kind is SlotKind.RAG_DOC}
    assert texts["kb:vpn.md#2"].startswith("Connecting to the VPN:\n1. Open the GlobalProtect")
    assert texts["kb:vpn.md#1"].startswith("The company VPN")  # prose: unchanged


STEPS = "1. Open the GlobalProtect app.\n2. Enter the portal address and click Connect."


async def test_a_how_to_question_gets_the_near_tied_procedure() -> None:
    hits = [
        FakeHit("kb:vpn.md#4", "- Gateway not responding: switch gateways.", 0.0325),
        FakeHit("kb:vpn.md#3", "Every employee gets VPN access.", 0.0322),
        FakeHit("kb:vpn.md#2", STEPS, 0.0318),
        FakeHit("kb:vpn.md#1", "The company VPN gives access.", 0.0316),
    ]
    kb = FakeKB(hits)
    context = await KnowledgeProvider(kb, k=2).get_relevant_context(
        ask("Wie verbinde ich mich mit dem VPN?")
    )
    assert context is not None
    assert kb.queries == [("Wie verbinde ich mich mit dem VPN?", 4)]  # k and the pool
    assert [s.source_id for s in context.slots[:2]] == ["kb:vpn.md#4", "kb:vpn.md#2"]


@pytest.mark.parametrize(
    ("question", "third", "expected"),
    [
        # not a how-to question: the ranking stands, and only k hits are asked for
        ("Who gets VPN access?", 0.0318, ["kb:a", "kb:b"]),
        # a problem report wants the troubleshooting passages as ranked
        ("How do I fix the VPN? It is broken", 0.0318, ["kb:a", "kb:b"]),
        # a procedure far below the k-th is a weaker passage, not a near-tie
        ("How do I connect to the VPN?", 0.02, ["kb:a", "kb:b"]),
    ],
)
async def test_the_ranking_stands_otherwise(
    question: str, third: float, expected: list[str]
) -> None:
    hits = [FakeHit("kb:a", "A.", 0.0325), FakeHit("kb:b", "B.", 0.0322)]
    kb = FakeKB([*hits, FakeHit("kb:steps", STEPS, third)])
    context = await KnowledgeProvider(kb, k=2).get_relevant_context(ask(question))
    assert context is not None
    assert [s.source_id for s in context.slots[:2]] == expected


async def test_a_procedure_already_in_the_top_k_is_kept_in_its_place() -> None:
    hits = [FakeHit("kb:steps", STEPS, 0.033), FakeHit("kb:b", "B.", 0.032)]
    kb = FakeKB([*hits, FakeHit("kb:more", STEPS, 0.0319)])
    context = await KnowledgeProvider(kb, k=2).get_relevant_context(ask("How do I connect?"))
    assert context is not None
    assert [s.source_id for s in context.slots[:2]] == ["kb:steps", "kb:b"]
