"""How a question is read against the prompt's evidence (smartctx.agents.questions)."""

from __future__ import annotations

from collections.abc import Callable

from smartctx.agents.knowledge import extract_knowledge
from smartctx.agents.questions import (
    asked_phrase,
    draws_away,
    unknown_in,
    unnamed_action,
    unnamed_thing,
    without,
)

EVIDENCE = extract_knowledge(
    [
        {
            "role": "system",
            "content": "[source: kb:a#1] Report a broken laptop in the IT service portal. "
            "Laptops are replaced every 4 years.",
        }
    ]
)


def test_the_action_a_how_question_asks_that_no_sentence_says() -> None:
    assert unnamed_action("How do I print from my laptop?", EVIDENCE) == "print"
    assert unnamed_action("how to print a file?", EVIDENCE) == "print"


def test_an_action_a_sentence_says_in_another_form_is_named() -> None:
    assert unnamed_action("How do I report a broken laptop?", EVIDENCE) is None
    assert unnamed_action("How can I replace my laptop?", EVIDENCE) is None  # "replaced"


def test_only_a_how_question_in_english_with_an_action_of_its_own_has_one() -> None:
    assert unnamed_action("How do I get a new phone?", EVIDENCE) is None  # a light word
    assert unnamed_action("How many laptops can I print?", EVIDENCE) is None
    assert unnamed_action("Can I print from my laptop?", EVIDENCE) is None
    assert unnamed_action("Wie drucke ich von meinem Laptop?", EVIDENCE) is None


def test_the_phrase_a_how_question_asks_to_act_on() -> None:
    assert asked_phrase("How do I report a broken chair?") == ["broken", "chair"]
    assert asked_phrase("How do I connect to the VPN on a new laptop?") == ["VPN"]
    assert asked_phrase("How do I set up my email signature?") == ["email", "signature"]
    assert asked_phrase("How do I request a day off?") == ["day"]
    assert asked_phrase("How do I reset it?") == []
    assert asked_phrase("Can I report a broken chair?") == []
    assert asked_phrase("Wie melde ich einen kaputten Stuhl?") == []


def meaning(pairs: dict[tuple[str, str], float]) -> Callable[[str, list[str]], list[float]]:
    """A similarity that knows ``pairs`` of words (0 for any other pair)."""
    return lambda word, others: [pairs.get((word, other), 0.0) for other in others]


def test_a_thing_no_sentence_names_whose_adjective_they_say_of_another_thing() -> None:
    apart = meaning({("chair", "laptop"): 0.4, ("notebook", "laptop"): 0.78})
    # "Report a broken laptop": the action and the adjective, of another thing
    assert unnamed_thing("How do I report a broken chair?", EVIDENCE, apart) == "chair"
    # the same thing in other words
    assert unnamed_thing("How do I report a broken notebook?", EVIDENCE, apart) is None
    # a thing a sentence names, an adjective said of nothing, a single word
    assert unnamed_thing("How do I report a broken laptop?", EVIDENCE, apart) is None
    assert unnamed_thing("How do I report a wobbly chair?", EVIDENCE, apart) is None
    assert unnamed_thing("How do I order a chair?", EVIDENCE, apart) is None


def closeness(scores: dict[str, float]) -> Callable[[str, list[str]], list[float]]:
    """A similarity of each question ``scores`` names to every text (0 for any other)."""
    return lambda text, others: [scores.get(text, 0.0)] * len(others)


def test_a_word_that_draws_a_question_away_from_every_sentence_is_a_name() -> None:
    question = "Wie installiere ich Zoom auf meinem Laptop?"
    assert without(question, "Zoom") == "Wie installiere ich auf meinem Laptop?"
    away = closeness({question: 0.30, "Wie installiere ich auf meinem Laptop?": 0.36})
    assert draws_away(question, "Zoom", ["Install it"], away)
    assert unknown_in(question, EVIDENCE, away) == ["Zoom"]
    # a word that moves the question neither way is not known to be a name
    level = closeness({question: 0.30, "Wie installiere ich auf meinem Laptop?": 0.30})
    assert not draws_away(question, "Zoom", ["Install it"], level)
    # without a similarity a capital tells nothing in German, which writes every noun with one
    assert unknown_in(question, EVIDENCE) == []


def test_a_noun_of_another_language_that_draws_a_question_to_a_sentence_is_no_name() -> None:
    question = "Wie viele Urlaubstage habe ich?"
    towards = closeness({question: 0.36, "Wie viele habe ich?": 0.09})
    assert not draws_away(question, "Urlaubstage", ["You have 25 days of leave"], towards)
    assert unknown_in(question, EVIDENCE, towards) == []
    # a place after its preposition is where a rule applies, whatever it does to the question
    hotel = "Wie viel darf ein Hotel in Singapur kosten?"
    assert unknown_in(hotel, EVIDENCE, closeness({"Wie viel darf ein Hotel in kosten?": 1})) == []
    # an English question's names need no similarity
    assert unknown_in("How do I install Zoom?", EVIDENCE) == ["Zoom"]
