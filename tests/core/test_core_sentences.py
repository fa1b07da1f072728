"""Sentences, questions and the share of a text that only asks."""

from __future__ import annotations

import pytest

from smartctx.agents import text as agents_text
from smartctx.core.sentences import (
    asked_parts,
    asking_share,
    is_question,
    only_asks,
    split_sentences,
)


def test_sentences_and_questions() -> None:
    assert split_sentences("## Leave\n\nYou get 25 days. Ask HR?\n\n- one item") == [
        "You get 25 days.",
        "Ask HR?",
        "one item",
    ]
    assert is_question("Wie geht's?") and is_question("本当？") and not is_question("Yes.")
    # the agents' units are these sentences, list items kept whole
    assert agents_text.split_units("One. Two?") == split_sentences("One. Two?")


@pytest.mark.parametrize(
    ("text", "share"),
    [
        ("I went to a support group yesterday.", 0.0),
        ("What got you into running?", 1.0),
        ("Did you go? Was it fun?", 1.0),
        ("", 0.0),
        ("Wow! What got you into running?", len("What got you into running?") / 30),
        ("I'm planning a trip. How about you?", len("How about you?") / 34),
    ],
)
def test_asking_share_counts_the_characters_in_questions(text: str, share: float) -> None:
    assert asking_share(text) == pytest.approx(share)


def test_only_asks_is_every_sentence_a_question() -> None:
    assert only_asks("Did you go? Was it fun?") and only_asks("")
    assert not only_asks("Yes. Was it fun?") and not only_asks("I went.")


def test_asked_parts_are_the_questions_of_a_message_with_what_leads_to_each() -> None:
    assert asked_parts("Did you ask me anything before? What did I tell you about my team?") == [
        "Did you ask me anything before?",
        "What did I tell you about my team?",
    ]
    assert asked_parts("My laptop broke. Who do I call? How long does it take? Thanks.") == [
        "My laptop broke. Who do I call?",
        "How long does it take? Thanks.",
    ]
    # one question (with or without statements around it) is the message itself
    for text in ("What is the hotel limit?", "I'm new. Where is the IT desk?", "Thanks.", ""):
        assert asked_parts(text) == [text]
