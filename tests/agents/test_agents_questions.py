"""How a question is read against the prompt's evidence (smartctx.agents.questions)."""

from __future__ import annotations

from smartctx.agents.knowledge import extract_knowledge
from smartctx.agents.questions import unnamed_action

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
