"""Retrieval: hybrid search (BM25 + vectors + rank fusion), recall into the window, knowledge base.

Layer: uses ``smartctx.core`` and ``smartctx.store`` only.
"""

from smartctx.retrieval.analysis import analyze, stem, words
from smartctx.retrieval.hybrid import Hit, HybridIndex
from smartctx.retrieval.keys import dated_slot_key, slot_context, slot_key, turn_key
from smartctx.retrieval.recall import HybridRecaller, RecallFilter

# --- knowledge base (owned by the KB helper: add your import lines and names below) ---
# isort: split
from smartctx.retrieval.chunking import Chunk as Chunk
from smartctx.retrieval.chunking import chunk_document as chunk_document
from smartctx.retrieval.kb import DocumentInfo as DocumentInfo
from smartctx.retrieval.kb import KBHit as KBHit
from smartctx.retrieval.kb import KnowledgeBase as KnowledgeBase
from smartctx.retrieval.kb_sources import builtin_corpus as builtin_corpus
from smartctx.retrieval.kb_store import KBStore as KBStore

# --- end knowledge base ---

__all__ = [
    "Hit",
    "HybridIndex",
    "HybridRecaller",
    "RecallFilter",
    "analyze",
    "dated_slot_key",
    "slot_context",
    "slot_key",
    "stem",
    "turn_key",
    "words",
]
