"""``smartctx bench answers``: the question set, the judging rules and the JSON shape."""

from __future__ import annotations

from collections import Counter

from smartctx.bench.answers import Outcome, run, summarize
from smartctx.bench.answers_data import (
    Question,
    evidence_present,
    is_abstention,
    is_correct,
    is_junk,
    load_questions,
)
from smartctx.bench.answers_report import question_set
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.retrieval.kb_sources import builtin_corpus

SHAPE = {
    "answer_accuracy",
    "abstain_accuracy",
    "evidence_in_prompt",
    "prompt_tokens",
    "junk_replies",
    "median_ms",
}


def test_the_question_set_is_as_large_and_varied_as_promised() -> None:
    questions = load_questions()
    assert len(questions) >= 60 and len({q.id for q in questions}) == len(questions)
    assert sum(q.lang != "en" for q in questions) >= 10
    assert sum(not q.answerable for q in questions) >= 10
    splits = Counter(q.split for q in questions)
    assert set(splits) == {"dev", "test"} and min(splits.values()) >= 30
    assert load_questions("dev") == [q for q in questions if q.split == "dev"]


def test_the_docs_count_the_question_set_as_shipped() -> None:
    def q(split: str, lang: str, *facts: str) -> Question:
        return Question("x", split, lang, "?", facts, ())

    sample = [q("dev", "en", "a"), q("test", "de", "b"), q("dev", "ko", "c"), q("dev", "en")]
    assert question_set(sample).startswith(
        "4 questions over the shipped helpdesk knowledge base, asked as users ask them (1 in "
        "English, 2 in German or Korean, 1 with no answer in the knowledge base; 3 dev, 1 test;"
    )
    shipped = load_questions()
    assert question_set(shipped).startswith(f"{len(shipped)} questions")


def test_every_required_fact_is_in_a_source_chunk_of_the_shipped_corpus() -> None:
    kb = KnowledgeBase(embedder=None, bridge_embedder=None)
    for name, text in builtin_corpus().items():
        kb.add_text(name, text)
    chunks = {c.source_id: c.text for c in kb.chunks()}
    for question in load_questions():
        assert all(s in chunks for s in question.sources), question.id
        evidence = " ".join(chunks[s] for s in question.sources)
        for fact in question.facts:
            assert any(alt in evidence for alt in fact.split("|")), (question.id, fact)


def test_judging() -> None:
    (taxi,) = [q for q in load_questions() if q.id == "q03"]
    assert is_correct(taxi, "Taxis: allowed when public transport is not practical [source: x]")
    assert not is_correct(taxi, "I don't have that information.")
    assert is_abstention("Dazu habe ich keine Informationen. (I don't have that information.)")
    assert is_junk('Current request (required; it wins over memory): "route_family": "DEF"')
    assert is_junk("[tool: kb.search] kb.search('x') -> (no results)")
    assert not is_junk("Hotels: up to USD 180 per night [source: kb:expense-reimbursement.md#1]")
    assert evidence_present(taxi, "... [source: kb:expense-reimbursement.md#1] ...")
    assert not evidence_present(taxi, "[source: kb:vpn.md#2]")


def test_summary_has_the_issue_shape() -> None:
    (q,) = load_questions()[:1]
    outcome = Outcome(q, "r", True, False, True, False, 100, 12.0)
    assert set(summarize([outcome])) >= SHAPE
    assert summarize([outcome])["answer_accuracy"] == 1.0


def test_a_small_run_over_a2a_fills_every_mode() -> None:
    result = run(["fresh", "shared"], limit=2)
    assert set(result["modes"]) == {"fresh", "shared"}
    for figures in result["modes"].values():
        assert set(figures) >= SHAPE and figures["questions"] == 2
        assert figures["evidence_in_prompt"] == 1.0 and figures["junk_replies"] == 0
