"""A question read in the words of its evidence (smartctx.retrieval.readings), and the knowledge
base judging a question by that reading."""

from __future__ import annotations

import pytest

from smartctx.retrieval.analysis import analyze
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.retrieval.readings import (
    general_reading,
    plain_words,
    unknown_names,
    unknown_places,
)

EVIDENCE = frozenset(
    analyze("Hotels: up to USD 180 per night (USD 250 in London, New York and Tokyo). Taxis.")
)


def knows(term: str) -> bool:
    return term in EVIDENCE


@pytest.mark.parametrize(
    ("question", "reading"),
    [
        ("What is the hotel limit in Singapore?", "What is the hotel limit?"),
        ("Can I take a taxi in Paris at night?", "Can I take a taxi at night?"),
        ("In Singapore, what is the hotel limit?", "what is the hotel limit?"),
        ("What is the hotel limit in New Delhi?", "What is the hotel limit?"),
        # the company or the party it is done with or for is a circumstance too
        ("Can I share a hotel with Priya?", "Can I share a hotel?"),
        ("What is the hotel limit for Acme Consulting?", "What is the hotel limit?"),
    ],
)
def test_a_place_the_evidence_never_names_is_left_out(question: str, reading: str) -> None:
    assert general_reading(question, knows) == reading


@pytest.mark.parametrize(
    "question",
    [
        "What is the hotel limit in London?",  # the evidence names London
        "What is the hotel limit in USD?",  # an acronym, not a place
        "How do I install Zoom?",  # a name that is the topic
        "What is the population of Singapore?",  # nothing the evidence knows is left
        "Who is the mayor in Singapore?",
        "Quelle est la limite d'hôtel à Londres ?",  # another language: as written
        "Wie hoch ist das Hotellimit in Singapur?",
    ],
)
def test_other_questions_are_read_as_written(question: str) -> None:
    assert general_reading(question, knows) is None


def test_unknown_places_are_the_names_after_a_preposition_of_place() -> None:
    assert unknown_places("Can I fly to Singapore via Tokyo from Hong Kong?", knows) == [
        "Singapore",
        "Hong Kong",
    ]


@pytest.mark.parametrize(
    ("question", "reading"),
    [
        ("What is the hotel limit in Singapore next week?", "What is the hotel limit next week?"),
        (
            "What is the hotel limit on a trip from Paris to London?",
            "What is the hotel limit on a trip to London?",
        ),
        ("Is the hotel limit in Singapore too low?", "Is the hotel limit too low?"),
    ],
)
def test_a_place_ends_where_an_adverb_or_a_preposition_follows(question: str, reading: str) -> None:
    assert general_reading(question, knows) == reading


@pytest.mark.parametrize(
    "question",
    ["How do I get to Singapore airport?", "Is there a taxi rank at Singapore airport?"],
)
def test_a_name_a_noun_follows_names_that_thing_and_is_read_as_written(question: str) -> None:
    # "Singapore airport" is a particular airport, not where a rule about airports applies
    assert unknown_places(question, knows) == []
    assert general_reading(question, knows) is None


def test_unknown_names_are_the_names_the_evidence_never_holds() -> None:
    assert unknown_names("How do I install Zoom?", knows) == ["Zoom"]
    assert unknown_names("What is the Euro exchange rate?", knows) == ["Euro"]
    assert unknown_names("How do I get to Singapore airport?", knows) == ["Singapore"]
    # known names, acronyms, a sentence's first word and the places a reading leaves out are not
    assert unknown_names("Is the London limit in USD? Zurich too?", knows) == []
    assert unknown_names("I'm locked out, and so is Paul's account.", knows) == ["Paul"]
    reading = general_reading("What is the hotel limit in Singapore?", knows) or ""
    assert unknown_names(reading, knows) == []


def test_a_latin_expression_the_evidence_never_uses_is_read_in_plain_words() -> None:
    assert plain_words("What is the meal per diem?", knows) == "What is the meal daily allowance?"
    assert plain_words("Per capita limit?", knows) == "per person limit?"
    meals = frozenset(analyze("Meals: a daily allowance of USD 60 while travelling."))
    assert general_reading("What is the Per Diem in Singapore?", meals.__contains__) == (
        "What is the daily allowance?"
    )
    # evidence that says "per diem" is searched with it
    said = frozenset(analyze("The per diem is USD 60."))
    assert plain_words("What is the per diem?", said.__contains__) == "What is the per diem?"
    assert general_reading("What is the per diem?", said.__contains__) is None


@pytest.fixture(scope="module")
def helpdesk() -> KnowledgeBase:
    kb = KnowledgeBase.builtin()  # USE, the served default
    kb.prepare()
    return kb


@pytest.mark.parametrize(
    ("question", "general"),
    [
        ("What is the hotel limit in Singapore?", "What is the hotel limit?"),
        ("Can I fly business class to Singapore?", "Can I fly business class?"),
    ],
)
def test_the_knowledge_base_finds_the_general_rule_for_a_place_it_never_names(
    helpdesk: KnowledgeBase, question: str, general: str
) -> None:
    # "in Singapore" pulled the travel limits under the gate and the hotel Wi-Fi tip above it
    found = [hit.source_id for hit in helpdesk.search(question, k=3)]
    assert found == [hit.source_id for hit in helpdesk.search(general, k=3)]
    assert found[0] == "kb:expense-reimbursement.md#1"


def test_a_place_does_not_make_an_off_topic_question_relevant(helpdesk: KnowledgeBase) -> None:
    assert helpdesk.search("What is the best hotel in Singapore?", k=3) == []
    assert helpdesk.search("What's the weather in Singapore?", k=3) == []


@pytest.mark.parametrize("question", ["What is the meal per diem?", "How much per diem do I get?"])
def test_the_knowledge_base_finds_the_daily_allowance_asked_for_as_a_per_diem(
    helpdesk: KnowledgeBase, question: str
) -> None:
    # USE does not bring "per diem" near "a daily allowance": the question fell under the gate
    assert helpdesk.search(question, k=1)[0].source_id == "kb:expense-reimbursement.md#1"
