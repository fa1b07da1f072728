"""Turn focus: what only a turn needed leaves the window when the turn ends."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from smartctx.core import HashingEmbedder, InvalidInput, Slot, SlotKind, SlotState, get_counter
from smartctx.window import ContextWindow, TurnFocus


class ByOverlap:
    """Ranks candidates by shared words with the query (a deterministic recaller)."""

    def rank(self, query: str, candidates: Sequence[Slot], k: int) -> list[tuple[Slot, float]]:
        asked = set(query.lower().split())
        scored = [(s, float(len(asked & set(s.text.lower().split())))) for s in candidates]
        scored = [pair for pair in scored if pair[1] > 0]
        return sorted(scored, key=lambda pair: -pair[1])[:k]


DEFAULT = TurnFocus()


def window(focus: TurnFocus | None = DEFAULT) -> ContextWindow:
    w = ContextWindow(
        2000,
        counter=get_counter(),
        embedder=HashingEmbedder(),
        recaller=ByOverlap(),
        focus=focus,
    )
    w.add(Slot(SlotKind.SYSTEM, "You answer helpdesk questions.", pinned=True))
    return w


def turn(w: ContextWindow, n: int, topic: str) -> list[str]:
    """One turn; the texts active just before it ends."""
    w.add(Slot(SlotKind.USER, f"question {n} about {topic}", pinned=True))
    w.add(Slot(SlotKind.TOOL_LOG, f"kb.search({topic}) -> kb:{topic}", source_id="kb.search"))
    w.add(Slot(SlotKind.RAG_DOC, f"The {topic} policy says rule {n}.", source_id=f"kb:{topic}"))
    w.add(Slot(SlotKind.MEMORY, f"remembered {topic} {n}", metadata={"provider": "memory"}))
    w.assemble(query=f"question {n} about {topic}")
    w.add(Slot(SlotKind.AGENT, f"answer {n} on {topic}"))
    during = [s.text for s in w.active]
    w.end_turn()
    return during


def test_the_end_of_a_turn_keeps_the_system_and_the_last_exchange_only() -> None:
    w = window()
    mine = w.add(Slot(SlotKind.MEMORY, "a note the user added to this context")).slot
    for n, topic in enumerate(["vpn", "taxi"]):
        turn(w, n, topic)
    during = turn(w, 2, "hotel")
    # during the turn, its evidence and memory were in the window
    assert {"The hotel policy says rule 2.", "remembered hotel 2"} <= set(during)
    texts = {s.text for s in w.active}
    assert texts == {
        "You answer helpdesk questions.",
        "a note the user added to this context",
        "question 2 about hotel",
        "answer 2 on hotel",
    }
    assert w.get(mine.id).state is SlotState.ACTIVE
    focused = [e for e in w.events if e.detail.get("stage") == "turn_focus"]
    assert focused and all(e.kind.value == "evicted" for e in focused)
    # nothing is lost: every slot is still in the log
    assert {s.text for s in w.log} >= {"The vpn policy says rule 0.", "answer 0 on vpn"}


def test_recall_brings_back_what_the_new_request_needs_within_its_share() -> None:
    w = window(TurnFocus(keep_turns=0, recall_share=0.1))
    for n, topic in enumerate(["vpn", "taxi", "hotel"]):
        turn(w, n, topic)
    w.add(Slot(SlotKind.USER, "what did the taxi policy say", pinned=True))
    prompt = w.assemble(query="what did the taxi policy say")
    recalled = {s.text for s in prompt.recalled}
    assert "The taxi policy says rule 1." in recalled
    assert sum(s.tokens for s in prompt.recalled) <= 200  # 10% of 2,000


def test_without_a_focus_the_window_keeps_everything_and_restore_keeps_focus_archives() -> None:
    plain = window(None)
    turn(plain, 0, "vpn")
    assert "The vpn policy says rule 0." in {s.text for s in plain.active}

    w = window()
    for n, topic in enumerate(["vpn", "taxi"]):
        turn(w, n, topic)
    restored = ContextWindow.restore(
        w.log, w.events, w.budget, counter=get_counter(), focus=TurnFocus()
    )
    assert [s.id for s in restored.active] == [s.id for s in w.active]


def test_focus_rejects_bad_options() -> None:
    with pytest.raises(InvalidInput):
        TurnFocus(keep_turns=-1)
    with pytest.raises(InvalidInput):
        TurnFocus(recall_share=1.5)


def test_recall_skips_what_the_window_already_says_but_not_a_new_number() -> None:
    w = window(TurnFocus(keep_turns=0, recall_share=0.5))
    w.add(Slot(SlotKind.AGENT, "The taxi policy says rule 1 applies after 22:00."))
    w.add(Slot(SlotKind.AGENT, "The taxi policy says rule 1 applies after 23:00."))
    w.end_turn()
    w.add(Slot(SlotKind.USER, "taxi policy rule", pinned=True))
    w.add(Slot(SlotKind.RAG_DOC, "The taxi policy says rule 1 applies after 22:00 only."))
    recalled = [s.text for s in w.assemble(query="taxi policy rule").recalled]
    assert recalled == ["The taxi policy says rule 1 applies after 23:00."]


def after_two_exchanges(*exchanges: tuple[str, str], asked: str) -> ContextWindow:
    """A window keeping one exchange, after ``exchanges`` (the first one archived), asked
    ``asked``."""
    w = window(TurnFocus(keep_turns=1, recall_share=0.5))
    for said, answered in exchanges:
        w.add(Slot(SlotKind.USER, said))
        w.add(Slot(SlotKind.AGENT, answered))
        w.end_turn()
    w.add(Slot(SlotKind.USER, asked, pinned=True))
    return w


def test_a_reply_that_repeats_the_users_statement_does_not_keep_the_statement_out() -> None:
    # the statement is archived; the reply repeating it stays active
    stated = ("My desk is 4B.", "Noted: your desk is 4B.")
    w = after_two_exchanges(stated, ("Where do I sit?", "Your desk is 4B."), asked="my desk?")
    recalled = [s.text for s in w.assemble(query="my desk").recalled]
    # the user's own words come back: the agent's reply is not evidence
    assert "My desk is 4B." in recalled


def test_a_document_that_shares_the_users_words_does_not_keep_their_statement_out() -> None:
    stated = ("I lost my laptop on the train", "Report it to the helpdesk.")
    w = after_two_exchanges(stated, ("who do I tell?", "The helpdesk."), asked="who else?")
    w.add(Slot(SlotKind.RAG_DOC, "Report a lost laptop on the train or my office to the desk."))
    recalled = [s.text for s in w.assemble(query="I lost my laptop on the train").recalled]
    # the document holds every word of it, but states the policy, not the user's situation
    assert "I lost my laptop on the train" in recalled
