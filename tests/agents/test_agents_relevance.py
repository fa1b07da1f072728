"""The relevance gate recalled memory must pass."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from smartctx.agents.relevance import (
    ABOUT_USER_QUESTION,
    LEXICAL_ONLY,
    GatedRecaller,
    RelevanceGate,
    asks_about_user,
    asks_user_fact,
    contextual_query,
    has_own_topic,
    query_for,
    thread_topic,
)
from smartctx.core import HashingEmbedder, Slot, SlotKind


class InOrder:
    """An inner recaller that ranks the candidates in the order given."""

    index = "inner attribute"

    def rank(self, query: str, candidates: Sequence[Slot], k: int) -> list[tuple[Slot, float]]:
        return [(slot, 1.0 / (n + 1)) for n, slot in enumerate(candidates)][:k]


def test_lexical_gate_keeps_items_sharing_most_of_the_request() -> None:
    gate = RelevanceGate(None)
    assert gate.threshold == LEXICAL_ONLY
    items = ["My laptop battery dies quickly", "Lunch is at noon", "my laptop BATTERY dies quickly"]
    kept = gate.select("laptop battery dies", items, lambda t: t)
    assert [t for t, _ in kept] == ["My laptop battery dies quickly"]  # each text once


@pytest.mark.parametrize("embedder", [None, HashingEmbedder()])
def test_each_question_of_a_request_is_judged_on_its_own(embedder: HashingEmbedder | None) -> None:
    gate = RelevanceGate(embedder, threshold=LEXICAL_ONLY)
    team = "I work on the payments team in Berlin."
    both = "Did you ask me anything before? What is my team?"
    alone = gate.scores("What is my team?", [team])[0]
    asked = gate.scores(both, [team], each_question=True)[0]
    # the first question's words no longer drown the second's
    assert asked == pytest.approx(alone) and asked >= gate.threshold
    assert gate.scores(both, [team])[0] < gate.threshold  # the message as one request
    assert [t for t, _ in gate.select(both, [team], lambda t: t)] == [team]
    other = "Did you ask me anything before? Is it raining?"
    assert gate.scores(other, [team], each_question=True)[0] < 0.3
    # the recaller judges the user's message by each question too
    slot = Slot(SlotKind.USER, team)
    assert GatedRecaller(InOrder(), gate).rank(both, [slot], 5) == [(slot, 1.0)]


def test_symmetric_scoring_lets_a_short_value_match_a_longer_request() -> None:
    gate = RelevanceGate(None)
    assert gate.scores("clean the bedroom now please", ["bedroom"])[0] < LEXICAL_ONLY
    assert gate.scores("clean the bedroom now please", ["bedroom"], symmetric=True)[0] == 1.0


def test_the_request_words_must_meet_in_one_sentence_of_a_passage() -> None:
    gate = RelevanceGate(None)
    steps = (
        "1. Open the VPN app. On a new laptop it is already installed. "
        "2. Sign in with your company e-mail address and password. "
        "3. You must approve the prompt on your phone."
    )
    # "new", "password" and "must" are in three steps: the passage is not about new passwords
    assert gate.scores("How long must a new password be?", [steps])[0] < LEXICAL_ONLY
    rule = steps + " 3. A new password must be 14 characters long."
    assert gate.scores("How long must a new password be?", [rule])[0] == 1.0


def test_allowance_and_threshold_from_the_embedder() -> None:
    gate = RelevanceGate(HashingEmbedder(), threshold=0.3)
    items = ["battery dies after an hour", "battery dies after two hours of use"]
    kept = gate.select("battery dies", items, lambda t: t, tokens=lambda t: 5, allowance=5)
    assert len(kept) == 1


def test_gated_recaller_passes_on_only_relevant_slots_and_never_tool_logs() -> None:

    slots = [
        Slot(SlotKind.RAG_DOC, "Lunch is served at noon in the canteen", source_id="kb:lunch"),
        Slot(SlotKind.RAG_DOC, "Laptop battery replacement takes two days", source_id="kb:bat"),
        Slot(SlotKind.TOOL_LOG, "kb.search('laptop battery replacement')", source_id="kb.search"),
        Slot(SlotKind.USER, "How long does a laptop battery replacement take?"),
        Slot(SlotKind.USER, "My laptop battery replacement ticket is 4411."),
    ]
    gated = GatedRecaller(InOrder(), RelevanceGate(None), top=8)
    ranked = gated.rank("laptop battery replacement", slots, 10)
    # neither the tool log nor the bare question comes back; the user's statement does
    assert [slot.text for slot, _ in ranked] == [slots[1].text, slots[4].text]
    assert gated.index == "inner attribute"  # the inner recaller's other attributes show through


def test_a_follow_up_that_names_nothing_is_searched_with_the_exchange_it_follows() -> None:

    previous = "How do I connect to the VPN?"
    assert contextual_query("and then?", previous) == "How do I connect to the VPN?\nand then?"
    assert contextual_query("and then?", None) == "and then?"
    asked = "Do I need a receipt for a lunch?"
    assert contextual_query(asked, previous) == asked


@pytest.mark.parametrize(
    "text",
    ["Who should I contact?", "What do I do now?", "who do I ask?", "Can you tell me who to call?"],
)
def test_a_follow_up_that_asks_for_help_names_no_topic(text: str) -> None:
    assert not has_own_topic(text)


@pytest.mark.parametrize(
    "text",
    [
        "How do I contact you?",
        "and in Paris?",
        "Who approves my vacation?",
        "I lost my laptop",
        # "and" with a thing of its own, or with a name, is not only going on with the thread
        "and for laptops?",
        "And what about sick leave?",
        "And how far in advance is Berlin?",
        "And how far in advance do I book a flight for a customer visit?",
    ],
)
def test_a_message_that_names_something_has_its_own_topic(text: str) -> None:
    assert has_own_topic(text)


@pytest.mark.parametrize(
    "text",
    [
        "And how far in advance?",
        "and when?",
        "And how long?",
        "Und wann?",
        # "get" names nothing, and "I" is no name
        "And when do I get paid back?",
    ],
)
def test_a_question_that_goes_on_with_the_threads_is_read_with_it(text: str) -> None:
    # "And how far in advance?" after "How do I request time off?" asks it of time off, not
    # of whatever else is booked in advance (flights)
    assert not has_own_topic(text)
    said = ["How do I request time off?", text]
    assert thread_topic(said) == said[0]


def test_the_threads_topic_is_the_last_message_that_named_one() -> None:
    said = ["How many vacation days do I get?", "I lost my laptop on the train", "who do I tell?"]
    assert thread_topic([*said, "thanks!", "What should I do now?"]) == said[1]
    assert thread_topic(["who do I tell?"]) is None and thread_topic([]) is None
    # a follow-up that names nothing is read with it, however many words it has
    asked = "Who should I contact about it now?"
    assert contextual_query(asked, said[1]) == f"{said[1]}\n{asked}"


def test_a_short_request_searched_with_the_message_before_it_is_also_judged_alone() -> None:
    # "And my desk?" names too little, so it is searched after the previous question; the
    # user's own statement of their desk bears on it alone, not on the two questions together

    slots = [
        Slot(SlotKind.USER, "My desk is in room 4B."),
        Slot(SlotKind.RAG_DOC, "Lunch is served at noon in the canteen", source_id="kb:lunch"),
    ]
    query = contextual_query("And my desk?", "How many vacation days do I get?")
    assert "\n" in query  # the request alone is elliptical
    gate = RelevanceGate(None)
    assert max(gate.scores(query, [slots[0].text], symmetric=True)) < gate.threshold
    ranked = GatedRecaller(InOrder(), gate, top=8).rank(query, slots, 10)
    assert [slot.text for slot, _ in ranked] == ["My desk is in room 4B."]
    # a question of the user's name is about the user, never read with the question before it
    assert contextual_query("What's my name?", "How many vacation days do I get?") == (
        "What is my name?"
    )


def test_a_follow_up_that_names_nothing_is_judged_by_the_threads_topic_alone() -> None:
    # "Who should I contact?" after "I lost my laptop on the train" asks about the laptop: an
    # archived VPN chunk that only shares "contact" must not come back (its own words name no
    # topic, so they are never judged alone)
    vpn = Slot(
        SlotKind.RAG_DOC,
        "If the problem persists, contact the helpdesk at helpdesk@example.com or call "
        "extension 4357 (HELP), and include a screenshot of the GlobalProtect error.",
        source_id="kb:vpn.md#4",
    )
    lost = Slot(SlotKind.USER, "I lost my laptop on the train")
    gate = RelevanceGate(None)
    query = contextual_query("Who should I contact?", lost.text)
    assert query == f"{lost.text}\nWho should I contact?"
    ranked = GatedRecaller(InOrder(), gate, top=8).rank(query, [vpn, lost], 10)
    assert [slot.text for slot, _ in ranked] == [lost.text]


def test_a_self_introduction_bears_on_a_question_about_the_name() -> None:

    slots = [
        Slot(SlotKind.USER, "Hi, I'm Dana and I just joined the support team."),
        Slot(SlotKind.RAG_DOC, "Lunch is served at noon in the canteen", source_id="kb:lunch"),
    ]
    ranked = GatedRecaller(InOrder(), RelevanceGate(None), top=8).rank(
        "What is my name?", slots, 10
    )
    assert [slot.text for slot, _ in ranked] == [slots[0].text]


def test_reporting_verbs_name_no_topic() -> None:
    # "What did I say my name was?" is about the name, not about saying
    gate = RelevanceGate(None)
    assert gate.scores("What did I say my name was?", ["My name is Dana."]) == [1.0]
    assert gate.scores("What did you tell me?", ["You told me about the VPN."])[0] > 0
    # nor is "about": the badge is the topic
    assert gate.scores("What did I tell you about my badge?", ["My badge number is 5521."]) == [1.0]


def test_a_question_of_who_the_user_is_searches_for_their_name() -> None:
    slots = [
        Slot(SlotKind.USER, "Hi, I'm Dana and I just joined the support team."),
        Slot(SlotKind.USER, "My desk is 4B."),
    ]
    for question in ("Who am I?", "Wer bin ich?"):
        # judged alone, the question has nothing the introduction holds
        assert RelevanceGate(None).scores(question, [slots[0].text]) == [0.0]
        query = contextual_query(question, "My desk is 4B.")
        assert query.endswith("What is my name?")
        ranked = GatedRecaller(InOrder(), RelevanceGate(None), top=8).rank(query, slots, 10)
        assert slots[0].text in [slot.text for slot, _ in ranked]


def test_a_question_of_who_the_user_is_is_not_read_with_the_exchange_before_it() -> None:
    # "What is my name?" alone: the question before it would steer the search away
    assert contextual_query("Who am I?", "Wie viele Urlaubstage habe ich?") == "What is my name?"


def test_a_question_of_what_is_known_of_the_user_brings_back_their_statements() -> None:
    stated = {"stated": "My name is Dana."}
    slots = [
        Slot(SlotKind.USER, "Hi, I'm Dana and I just joined the support team.", metadata=stated),
        Slot(SlotKind.USER, "How many vacation days do I get?"),
        Slot(SlotKind.AGENT, "Full-time employees have 25 days of paid annual leave."),
        Slot(SlotKind.USER, "My desk is 4B.", metadata={"stated": "My desk is 4B."}),
    ]
    for question in (
        "What do you know about me?",
        "Tell me about myself",
        "Was weißt du über mich?",
    ):
        assert asks_about_user(question)
        query = contextual_query(question, "How many vacation days do I get?")
        assert query == ABOUT_USER_QUESTION
        ranked = GatedRecaller(InOrder(), RelevanceGate(None), top=8).rank(query, slots, 10)
        assert [slot.text for slot, _ in ranked] == ["My desk is 4B.", slots[0].text]
    assert not asks_about_user("What do you know about the VPN?")
    assert query_for("Who am I?") == "What is my name?"


@pytest.mark.parametrize(
    ("question", "personal"),
    [
        ("Where do I work?", True),
        ("Which office do I work in?", True),
        ("Which team am I in?", True),
        ("What's my role?", True),
        ("Who do I report to?", True),
        ("Wo arbeite ich?", True),
        ("¿Dónde trabajo?", True),
        ("Where am I travelling next week?", True),
        ("Where am I going in May?", True),
        ("Where do I send my receipts?", False),
        ("How many days do I work per week?", False),
        ("What hours do I work?", False),
        ("What is my vacation allowance?", False),
        ("Where do I go to collect my badge?", False),
    ],
)
def test_a_fact_of_the_users_own_life_is_searched_in_what_they_stated(
    question: str, personal: bool
) -> None:
    assert asks_user_fact(question) is personal
    # never read with the exchange before it ("and in Paris?\nWhere do I work?")
    contextual = contextual_query(question, "Hotels?")
    assert (contextual == ABOUT_USER_QUESTION) is personal
    assert (query_for(question) == ABOUT_USER_QUESTION) is personal
