"""The knowledge base's cross-lingual sentence bridge (smartctx.retrieval.kb_sentences)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from smartctx.core import HashingEmbedder
from smartctx.core.embeddings import Vector
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.retrieval.kb_sentences import chunk_sentences

LEAVE = "# Leave\n\nFull-time employees have 25 days of paid annual leave per year.\n"
VPN = "# VPN\n\nOpen the GlobalProtect app and connect to the company network.\n"


class ConceptEmbedder:
    """Stands in for a multilingual embedder: words of one concept share a dimension."""

    name = "concepts"
    CONCEPTS: ClassVar[dict[str, int]] = {
        "leave": 0,
        "urlaubstage": 0,
        "vacaciones": 0,
        "globalprotect": 1,
    }

    def embed(self, texts: Sequence[str]) -> Vector:
        out = np.zeros((len(texts), 3), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.casefold().replace("?", " ").replace(".", " ").split():
                if word in self.CONCEPTS:
                    out[row, self.CONCEPTS[word]] = 1.0
                else:
                    out[row, 2] = 0.3
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def kb(bridge: bool) -> KnowledgeBase:
    base = KnowledgeBase(
        embedder=HashingEmbedder(),
        bridge_embedder=ConceptEmbedder() if bridge else None,
        min_similarity=0.99,
        strong_similarity=2.0,
        bridge_similarity=0.5,
    )
    base.add_text("leave.md", LEAVE)
    base.add_text("vpn.md", VPN)
    return base


def test_a_question_in_another_language_reaches_the_english_chunk_through_the_bridge() -> None:
    assert kb(bridge=False).search("Wie viele Urlaubstage habe ich?", 2) == []
    hits = kb(bridge=True).search("Wie viele Urlaubstage habe ich?", 2)
    assert [h.source_id for h in hits] == ["kb:leave.md#1"]


def test_an_off_topic_question_stays_unanswered_with_the_bridge() -> None:
    assert kb(bridge=True).search("Wie wird das Wetter morgen?", 2) == []


def test_fragments_are_not_matched_alone() -> None:
    assert chunk_sentences("How to submit:\n\n1. Open the portal and sign in.") == [
        "Open the portal and sign in."
    ]
