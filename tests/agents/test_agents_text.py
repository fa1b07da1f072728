"""Text helpers of the offline responder: list items keep their number, how-to questions."""

from __future__ import annotations

import pytest

from smartctx.agents.text import asks_how, numbered_units, split_units

DOC = """## Connecting

The VPN gives you access. It is always on.

1. Open the app.
2. Enter the portal address
   `vpn.example.com`.
- A bullet.
"""


def test_numbered_units_keep_the_number_of_an_ordered_list_item() -> None:
    assert numbered_units(DOC) == [
        ("The VPN gives you access.", None),
        ("It is always on.", None),
        ("Open the app.", 1),
        ("Enter the portal address `vpn.example.com`.", 2),
        ("A bullet.", None),
    ]
    assert split_units(DOC) == [unit for unit, _ in numbered_units(DOC)]


@pytest.mark.parametrize(
    "question",
    [
        "How do I reset my password?",
        "how can I connect to the VPN",
        "What are the steps to submit a claim?",
        "Wie verbinde ich mich mit dem VPN?",
        "Comment se connecter au VPN ?",
        "Pour le VPN, comment je me connecte ?",
        "¿Cómo pido un taxi?",
        "VPN 어떻게 연결해요?",
    ],
)
def test_a_question_asking_how_to_do_something_asks_how(question: str) -> None:
    assert asks_how(question)


@pytest.mark.parametrize(
    "question",
    [
        "How many vacation days do I get?",
        "How long must a password be?",
        "Wie viele Urlaubstage habe ich?",
        "What is the hotel limit in London?",
        "Can I add a comment to my claim?",
        "Is a hotel like the Ritz covered, como siempre?",
    ],
)
def test_a_question_for_a_value_does_not_ask_how(question: str) -> None:
    assert not asks_how(question)
