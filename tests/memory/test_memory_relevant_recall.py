"""Relevant recall only: the personal-memory hook with a relevance gate, and what it stores."""

from __future__ import annotations

from smartctx.agents.relevance import RelevanceGate
from smartctx.core.slots import SlotKind
from smartctx.core.tokens import WhitespaceCounter
from smartctx.memory import PairIn, PersonalMemory
from smartctx.memory.quality import is_chit_chat, junk_reason
from smartctx.service.hooks import TurnContext
from smartctx.service.personal_hook import RECALL_PRIORITY, create_hook


async def test_only_relevant_pairs_enter_below_the_evidence(memory: PersonalMemory) -> None:
    await memory.add_pair(
        "ann", PairIn("My laptop battery dies after one hour.", "Noted.", id="p1")
    )
    await memory.add_pair("ann", PairIn("My favourite lunch place is Luigi's.", "Noted.", id="p2"))
    hook = create_hook(memory, gate=RelevanceGate(None), counter=WhitespaceCounter())
    turn = TurnContext("ann", "ctx-new", "The laptop battery dies again", {})
    await hook.before_turn(turn)
    assert [s.source_id for s in turn.slots] == ["pair:p1"]
    (slot,) = turn.slots
    assert slot.kind is SlotKind.MEMORY and slot.priority == RECALL_PRIORITY < 7
    assert "{" not in slot.text and "route_family" not in slot.text


async def test_a_restated_attribute_recalls_only_its_latest_turn(memory: PersonalMemory) -> None:
    said = [
        ("p0", "My manager is Ana Lopez. I love hiking with my manager."),  # and something else
        ("p1", "My manager is Ana Lopez."),
        ("p2", "Actually my manager is now Tom Berg."),
    ]
    for pair_id, text in said:
        await memory.add_pair("di", PairIn(text, "Noted.", id=pair_id))
    hook = create_hook(memory, gate=RelevanceGate(None), counter=WhitespaceCounter())
    turn = TurnContext("di", "ctx-new", "Who is my manager?", {})
    await hook.before_turn(turn)
    assert sorted(s.source_id for s in turn.slots) == ["pair:p0", "pair:p2"]


async def test_the_allowance_caps_recalled_memory(memory: PersonalMemory) -> None:
    for n in range(3):
        text = f"My laptop battery report number {n} says it dies after one hour."
        await memory.add_pair("bo", PairIn(text, "Noted.", id=f"p{n}"))
    hook = create_hook(memory, gate=RelevanceGate(None), counter=WhitespaceCounter(), allowance=20)
    turn = TurnContext("bo", "ctx-new", "laptop battery dies after one hour", {})
    await hook.before_turn(turn)
    assert sum(len(s.text.split()) for s in turn.slots) <= 20 and len(turn.slots) == 1


async def test_junk_turns_are_not_stored_and_old_junk_rows_are_not_recalled(
    memory: PersonalMemory,
) -> None:
    hook = create_hook(memory, gate=RelevanceGate(None), counter=WhitespaceCounter())
    asked = TurnContext("cy", "ctx-1", "How long must a laptop password be?", {})
    asked.reply = "I don't have that information."
    await hook.after_turn(asked)
    chatter = TurnContext("cy", "ctx-1", "Thanks, hello!", {})
    chatter.reply = "You're welcome."
    await hook.after_turn(chatter)
    assert await memory.pairs("cy") == []
    # a row stored before the filter existed is still never recalled
    await memory.add_pair(
        "cy", PairIn("How long must a laptop password be?", "I don't have that information.")
    )
    turn = TurnContext("cy", "ctx-2", "How long must a laptop password be?", {})
    await hook.before_turn(turn)
    assert turn.slots == []


def test_junk_reasons() -> None:
    assert junk_reason("Where is my desk?", "internal_error: boom") == "error"
    assert junk_reason("hi", '{"route_family": "DEF"}') == "scaffolding"
    assert junk_reason("Where is my desk?", "I don't have that information.") == "abstention"
    assert junk_reason("My desk is 5C.", "Noted: Your desk is 5C.") is None
    assert is_chit_chat("Hello there, how are you today my friend?")
    assert is_chit_chat("안녕하세요") and not is_chit_chat("안방 청정해줘")
    assert not is_chit_chat("Thanks, room 42")


def test_recalled_memory_never_displaces_the_turns_evidence() -> None:
    from smartctx.core import HashingEmbedder, Slot, get_counter
    from smartctx.window import ContextWindow, EvictLowestPriority

    window = ContextWindow(
        600, counter=get_counter(), embedder=HashingEmbedder(), funnel=[EvictLowestPriority()]
    )
    window.add(Slot(SlotKind.SYSTEM, "You are the helpdesk.", pinned=True))
    for n in range(6):
        text = f"Earlier turn {n}. User: unrelated memory number {n} " + "filler " * 80
        window.add(Slot(SlotKind.MEMORY, text, source_id=f"pair:{n}", priority=RECALL_PRIORITY))
    doc = "Taxis: allowed when public transport is not practical, or after 22:00. " * 6
    window.add(Slot(SlotKind.RAG_DOC, doc, source_id="kb:expense-reimbursement.md#1"))
    window.add(Slot(SlotKind.USER, "Can I expense a taxi?", pinned=True))
    active = {s.source_id for s in window.assemble().slots}
    assert "kb:expense-reimbursement.md#1" in active
    assert len([s for s in active if s and s.startswith("pair:")]) < 6
