"""KnowledgeBase in memory: documents, stable ids, replacement, removal, lexical relevance."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from smartctx.core.embeddings import HashingEmbedder, Vector
from smartctx.core.errors import ConfigError, InvalidInput, NotFound
from smartctx.retrieval import kb as kb_module
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.retrieval.kb_sources import builtin_corpus

PRINTERS = "# Printers\n\n## Toner\n\nSpare toner cartridges are in the cupboard on floor 3.\n"
WIFI = "# Wi-Fi\n\n## Guests\n\nGuests join the network ExampleGuest with the code on the badge.\n"


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting the passages it embeds."""

    def __init__(self) -> None:
        super().__init__(dim=64)
        self.passages = 0

    def embed(self, texts: Sequence[str]) -> Vector:
        self.passages += len(texts)
        return super().embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return super().embed(texts)


@pytest.fixture
def kb() -> KnowledgeBase:
    base = KnowledgeBase(embedder=CountingEmbedder())
    base.add_text("printers.md", PRINTERS)
    base.add_text("wifi.md", WIFI)
    return base


def test_search_finds_the_document_that_shares_terms(kb: KnowledgeBase) -> None:
    hits = kb.search("where is the toner cartridge?", k=3)
    assert [h.source_id for h in hits] == ["kb:printers.md#1"]
    hit = hits[0]
    assert hit.doc == "printers.md"
    assert hit.heading == hit.title == "Printers > Toner"
    assert hit.text == "Spare toner cartridges are in the cupboard on floor 3."
    assert hit.lexical > 0 and hit.score > 0
    assert hit.to_dict()["source_id"] == "kb:printers.md#1"


def test_no_shared_term_means_nothing_relevant(kb: KnowledgeBase) -> None:
    assert kb.search("Thanks! How is the weather today?") == []
    assert kb.search("   ") == []
    assert kb.search("toner", k=0) == []


def test_thresholds_can_be_raised_per_call(kb: KnowledgeBase) -> None:
    assert kb.search("toner", min_similarity=0.99) == []
    assert len(kb.search("toner", min_similarity=0.0)) == 1


def test_adding_is_lazy_and_embeds_once_per_change(kb: KnowledgeBase) -> None:
    embedder = kb.embedder
    assert isinstance(embedder, CountingEmbedder)
    assert embedder.passages == 0
    kb.search("toner")
    assert embedder.passages == 2
    kb.search("guests")
    assert embedder.passages == 2
    kb.add_text("wifi.md", WIFI)  # same content: nothing to do
    kb.search("guests")
    assert embedder.passages == 2


def test_same_content_keeps_ids_and_new_content_replaces_chunks(kb: KnowledgeBase) -> None:
    again = kb.add_text("printers.md", PRINTERS)
    assert [c.source_id for c in again] == ["kb:printers.md#1"]
    assert kb.search("toner")[0].source_id == "kb:printers.md#1"
    changed = PRINTERS + "\n## Paper\n\nPaper reams are next to the toner.\n"
    chunks = kb.add_text("printers.md", changed)
    assert [c.source_id for c in chunks] == ["kb:printers.md#1", "kb:printers.md#2"]
    assert {h.source_id for h in kb.search("paper reams")} == {"kb:printers.md#2"}
    kb.add_text("printers.md", "# Printers\n\n## Scanning\n\nScan to e-mail from the panel.\n")
    assert kb.search("toner cartridges") == []
    assert kb.chunk("kb:printers.md#1").text == "Scan to e-mail from the panel."
    with pytest.raises(NotFound):
        kb.chunk("kb:printers.md#2")


def test_remove_and_documents(kb: KnowledgeBase) -> None:
    assert [d.name for d in kb.documents()] == ["printers.md", "wifi.md"]
    assert all(d.origin == "added" and d.chunks == 1 for d in kb.documents())
    assert [c.source_id for c in kb.chunks()] == ["kb:printers.md#1", "kb:wifi.md#1"]
    kb.search("toner")
    kb.remove("printers.md")
    assert kb.search("toner") == []
    assert [d.name for d in kb.documents()] == ["wifi.md"]
    with pytest.raises(NotFound):
        kb.remove("printers.md")


def test_add_paths_walks_directories_in_sorted_order(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "wifi.md").write_text(WIFI)
    (tmp_path / "printers.txt").write_text(PRINTERS)
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    extra = tmp_path / "extra.markdown"
    extra.write_text("# Extra\n\nMore text here.\n")
    kb = KnowledgeBase(embedder=HashingEmbedder())
    added = kb.add_paths([tmp_path / "sub", tmp_path / "printers.txt", extra])
    assert added == {"wifi.md": 1, "printers.txt": 1, "extra.markdown": 1}
    assert kb.search("guests badge")[0].source_id == "kb:wifi.md#1"


def test_bad_inputs_are_clear_errors(tmp_path: Path) -> None:
    kb = KnowledgeBase(embedder=HashingEmbedder())
    with pytest.raises(NotFound):
        kb.add_file(tmp_path / "missing.md")
    binary = tmp_path / "bin.md"
    binary.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(InvalidInput):
        kb.add_file(binary)
    for name in ("", "a#b.md", "dir/a.md"):
        with pytest.raises(InvalidInput):
            kb.add_text(name, "text")
    with pytest.raises(InvalidInput):
        kb.add_text("empty.md", "# Only a heading\n")
    with pytest.raises(InvalidInput):
        KnowledgeBase(owner="")


async def test_persistence_needs_a_database() -> None:
    kb = KnowledgeBase(embedder=HashingEmbedder())
    with pytest.raises(ConfigError):
        await kb.save()
    with pytest.raises(ConfigError):
        await kb.load()


def test_builtin_holds_the_shipped_corpus() -> None:
    corpus = builtin_corpus()
    assert set(corpus) == {
        "vpn.md",
        "expense-reimbursement.md",
        "password-reset.md",
        "leave.md",
        "laptops.md",
    }
    kb = KnowledgeBase.builtin(embedder=HashingEmbedder())
    docs = kb.documents()
    assert [d.name for d in docs] == sorted(corpus)
    assert all(d.origin == "builtin" for d in docs)
    assert "helpdesk@example.com" in corpus["vpn.md"]


def test_builtin_reads_the_corpus_on_first_use_not_at_construction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    real = kb_module.builtin_corpus

    def counting() -> dict[str, str]:
        calls.append(1)
        return real()

    monkeypatch.setattr(kb_module, "builtin_corpus", counting)
    kb = KnowledgeBase.builtin(embedder=HashingEmbedder())
    assert calls == []
    assert len(kb.documents()) == 5
    assert len(kb.chunks()) > 5
    assert calls == [1]


def test_an_empty_knowledge_base_is_still_truthy() -> None:
    assert KnowledgeBase(embedder=HashingEmbedder())  # callers write ``kb or default``


def test_default_embedder_follows_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMARTCTX_RETRIEVAL_EMBEDDER", "hashing")
    assert KnowledgeBase().embedder.name.startswith("hashing")


def test_a_caching_embedder_learns_each_chunks_vector_and_the_query_is_cached_first() -> None:
    import numpy as np

    from smartctx.core.embed_cache import CachedEmbedder

    inner = CountingEmbedder()
    cached = CachedEmbedder(inner)
    base = KnowledgeBase(embedder=cached)
    base.add_text("printers.md", PRINTERS)
    base.search("where is the toner?", k=1)
    (chunk,) = base.chunks()
    vouched = cached.known(chunk.text.strip())
    assert vouched is not None  # the whole-chunk view, shared under the chunk's text
    embedded = inner.passages
    assert np.array_equal(cached.embed([chunk.text.strip()])[0], vouched)
    assert inner.passages == embedded  # a window recalling the chunk embeds nothing
    hits = cached.hits
    base.search("where is the toner?", k=1)  # embedded before the lock, then found cached
    assert cached.hits > hits
