"""When a question asks when something comes about that the evidence names only as the purpose of
an instruction, for the offline responder (:mod:`smartctx.agents.grounded`).

"How long does reimbursement take?" meets one sentence that says "reimbursed": "To get your
expenses reimbursed, submit a claim in the Expenses app ... within 30 days of the expense". Its
time is the reader's deadline for the instruction, not how long the purpose takes to come about;
what happens after it is said elsewhere, of the thing the instruction acts on ("Finance checks
the claim within 5 working days and pays approved amounts with the next payroll ..."), in other
words than the question's ("pays", not "reimburses", which the sentence encoder does not bring
together). :func:`when_done` answers such a question with that sentence: the time of what
becomes of the instruction's object. Pure; linear in the number of sentences.
"""

from __future__ import annotations

from collections.abc import Sequence

from smartctx.agents.answer_scoring import (
    LIGHT_WORDS,
    TIMES,
    answer_types,
    gives,
    holds,
    light_words,
    purposes,
    says_when,
)
from smartctx.agents.knowledge import Sentence, document_of
from smartctx.agents.relevance import topic_words
from smartctx.retrieval.analysis import analyze

Ranked = tuple[Sentence, float, float]
"""A sentence with its score and similarity, as the responder ranks them."""


def purpose_only(question: str, sentence: Sentence) -> list[str]:
    """The instructions of ``sentence`` whose purpose holds every topic word of ``question``
    that the sentence holds, when it holds none of them elsewhere: "submit a claim ... within 30
    days of the expense" for "How long does reimbursement take?" beside "To get your expenses
    reimbursed, submit ...". Empty when the sentence says what the question names otherwise
    ("When do I have to submit my claim?": the instruction itself holds "submit")."""
    told = purposes(sentence.text)
    if not told:
        return []
    light = light_words(question)
    held = [t for t in topic_words(question) if t not in light and holds(sentence.tokens, t)]
    aims = frozenset(analyze(" ".join(aim for aim, _ in told)))
    rest = sentence.text
    for aim, _ in told:
        rest = rest.replace(aim, " ")
    elsewhere = frozenset(analyze(rest))
    if not held or not all(holds(aims, t) and not holds(elsewhere, t) for t in held):
        return []
    return [body for _, body in told]


def when_done(
    question: str, ranked: Sequence[Ranked], sentences: Sequence[Sentence]
) -> list[Ranked]:
    """``ranked`` (best first) with, first, the sentence that says when the question's topic
    comes about, when ``question`` asks a time (:data:`~smartctx.agents.answer_scoring.TIMES`:
    "When will I be reimbursed?", "How long does reimbursement take?") and the best sentence
    names that topic only as an instruction's purpose (:func:`purpose_only`) and gives no time
    of what happens: among ``sentences`` of its document, the one that gives such a time
    (:func:`~smartctx.agents.answer_scoring.gives`) in the clauses that share the most words of
    what the instruction tells the reader to do ("claim", "finance"), the earlier among equals.
    It scores as the best did. ``ranked`` unchanged otherwise, or when none gives a time."""
    if not ranked or not TIMES & set(answer_types(question)):
        return list(ranked)
    top, value, similarity = ranked[0]
    if gives(top.text, tuple(TIMES)):
        return list(ranked)
    bodies = purpose_only(question, top)
    if not bodies:
        return list(ranked)
    acted_on = frozenset(analyze(" ".join(bodies))) - LIGHT_WORDS
    best: tuple[int, Sentence] | None = None
    for sentence in sentences:
        if sentence is top or document_of(sentence.source) != document_of(top.source):
            continue
        if sentence.text.rstrip().endswith(":") or not gives(sentence.text, tuple(TIMES)):
            continue
        shared = len(acted_on & frozenset(analyze(says_when(sentence.text))))
        if shared and (best is None or shared > best[0]):
            best = (shared, sentence)
    if best is None:
        return list(ranked)
    found = best[1]
    return [(found, value, similarity), *(item for item in ranked if item[0] is not found)]
