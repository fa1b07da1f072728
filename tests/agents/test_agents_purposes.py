"""A question of when something comes about that the evidence names only as an instruction's
purpose (smartctx.agents.purposes)."""

from __future__ import annotations

from smartctx.agents.answer_scoring import answer_types, purposes
from smartctx.agents.knowledge import extract_knowledge
from smartctx.agents.purposes import purpose_only, when_done

DEADLINE = (
    "To get your expenses reimbursed, submit a claim in the finance portal within 30 days of "
    "the expense; claims older than 90 days are not paid."
)
PAYMENT = "Finance checks the claim within 5 working days and pays approved amounts."
EVIDENCE = extract_knowledge(
    [
        {"role": "system", "content": f"[source: kb:expenses.md#1] {DEADLINE}"},
        {
            "role": "system",
            "content": "[source: kb:expenses.md#1] Trains: first class for journeys over 3 "
            f"hours.\n\n{PAYMENT}",
        },
    ]
)
DEADLINE_FIRST = [(s, 1.0 - n / 10, 0.3) for n, s in enumerate(EVIDENCE)]


def test_how_long_something_takes_asks_when_it_is_done() -> None:
    assert "time" in answer_types("How long does reimbursement take?")
    assert "time" in answer_types("Wie lange dauert die Erstattung?")
    # how long one has to act, and how long a thing must be, are no time of what happens
    assert "time" not in answer_types("How long do I have to submit a claim?")
    assert "time" not in answer_types("How long must a new password be?")


def test_an_instruction_s_purpose_is_what_it_is_done_for() -> None:
    assert purposes(DEADLINE) == [
        ("To get your expenses reimbursed", "submit a claim in the finance portal within 30 days "
         "of the expense"),
    ]  # fmt: skip
    deadline = EVIDENCE[0]
    assert purpose_only("How long does reimbursement take?", deadline)
    # the instruction itself holds what the question names: it answers it
    assert purpose_only("When do I have to submit my claim?", deadline) == []


def test_the_time_of_what_becomes_of_the_instruction_s_object_answers_first() -> None:
    for question in ("How long does reimbursement take?", "When will I be reimbursed?"):
        first = when_done(question, DEADLINE_FIRST, EVIDENCE)[0]
        assert first[0].text == PAYMENT and first[1:] == DEADLINE_FIRST[0][1:]
    # the reader's deadline, asked for
    asked = when_done("When do I have to submit my claim?", DEADLINE_FIRST, EVIDENCE)
    assert asked == DEADLINE_FIRST
    # a question of no time
    assert when_done("Can I get reimbursed?", DEADLINE_FIRST, EVIDENCE) == DEADLINE_FIRST
