"""The shipped IT-helpdesk corpus with the default retrieval embedder (e5): the demo scenario.

The demo asks, in one context: the VPN question, chit-chat, the reimbursement question, the VPN
question again. It needs the same VPN chunk twice, nothing for chit-chat, and the long
reimbursement chunk (long enough to overflow a 600-800 token budget).
"""

from __future__ import annotations

import pytest

from smartctx.core.embeddings import get_embedder
from smartctx.core.settings import Settings
from smartctx.core.tokens import get_counter
from smartctx.retrieval.kb import KnowledgeBase


@pytest.fixture(scope="session")
def helpdesk() -> KnowledgeBase:
    kb = KnowledgeBase.builtin(embedder=get_embedder("e5"))
    kb.prepare()
    return kb


def test_use_is_the_default_retrieval_embedder() -> None:
    # a turn embeds its query in a few milliseconds with USE (e5: 20-45 ms), see issue 10
    assert Settings().retrieval_embedder == Settings().embedder == "use"


def test_both_vpn_phrasings_retrieve_the_same_connecting_chunk(helpdesk: KnowledgeBase) -> None:
    first = helpdesk.search("How do I connect to the VPN?", k=2)
    again = helpdesk.search("How do I connect to the VPN again?", k=2)
    assert first[0].source_id == again[0].source_id == "kb:vpn.md#2"
    assert first[0].heading == "VPN > Connecting to the VPN"
    assert first[0].text == again[0].text
    assert "vpn.example.com" in first[0].text
    assert all(h.doc == "vpn.md" for h in first + again)


@pytest.mark.parametrize(
    "chit_chat",
    [
        "Thanks! How is the weather today?",
        "Thanks!",
        "hello",
        "Tell me a joke",
        "What time is it?",
        "Who won the football match yesterday?",
        "ok great, thank you so much",
    ],
)
def test_chit_chat_retrieves_nothing(helpdesk: KnowledgeBase, chit_chat: str) -> None:
    assert helpdesk.search(chit_chat, k=3) == []


def test_reimbursement_question_retrieves_the_long_policy_chunk(helpdesk: KnowledgeBase) -> None:
    hits = helpdesk.search("How do I get my travel expenses reimbursed?", k=2)
    top = hits[0]
    assert top.source_id == "kb:expense-reimbursement.md#1"
    tokens = get_counter("cl100k_base").count(top.text)
    assert 350 <= tokens <= 600
    assert "finance.example.com" in top.text


@pytest.mark.parametrize(
    ("question", "source_id"),
    [
        ("I forgot my password", "kb:password-reset.md#1"),
        ("How many vacation days do I have?", "kb:leave.md#1"),
        ("My laptop was stolen, what should I do?", "kb:laptops.md#2"),
        ("How much can I spend on a hotel?", "kb:expense-reimbursement.md#1"),
        ("What is the hotel limit?", "kb:expense-reimbursement.md#1"),  # a view of a long chunk
        ("VPN에 어떻게 연결하나요?", "kb:vpn.md#2"),
    ],
)
def test_other_questions_find_their_section(
    helpdesk: KnowledgeBase, question: str, source_id: str
) -> None:
    assert helpdesk.search(question, k=1)[0].source_id == source_id


def test_each_shipped_document_has_realistic_size(helpdesk: KnowledgeBase) -> None:
    docs = {d.name: d for d in helpdesk.documents()}
    assert set(docs) == {
        "vpn.md",
        "expense-reimbursement.md",
        "password-reset.md",
        "leave.md",
        "laptops.md",
    }
    assert all(d.chunks >= 3 and d.tokens >= 200 for d in docs.values())
