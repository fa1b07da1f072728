"""Progress during long knowledge-base work: the embedding reports as it goes, and
``smartctx kb add`` shows a bar with a count, a rate and an ETA for it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from smartctx.cli import app
from smartctx.core import HashingEmbedder
from smartctx.core.reporting import ReportingEmbedder
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.store import Database


def test_the_reporting_embedder_reports_each_slice_and_changes_no_vector() -> None:
    inner = HashingEmbedder()
    seen: list[tuple[int, int]] = []
    wrapped = ReportingEmbedder(inner, lambda done, total: seen.append((done, total)), batch=16)
    texts = [f"text number {i}" for i in range(40)]
    assert wrapped.name == inner.name and wrapped.dim == inner.dim
    np.testing.assert_array_equal(wrapped.embed(texts), inner.embed(texts))
    assert seen == [(16, 40), (32, 40), (40, 40)]
    assert wrapped.embed([]).shape[0] == 0


async def test_save_reports_the_embedding(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'kb.db'}")
    await db.migrate()
    try:
        kb = KnowledgeBase(db=db, embedder=HashingEmbedder())
        for i in range(40):
            paragraphs = "\n\n".join(
                f"Paragraph {j} of document {i} about printers." for j in range(8)
            )
            kb.add_text(f"doc{i}.md", f"# Document {i}\n\n{paragraphs}\n")
        seen: list[tuple[int, int]] = []
        await kb.save(progress=lambda done, total: seen.append((done, total)))
    finally:
        await db.close()
    assert len(seen) >= 2
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert seen[-1][0] == seen[-1][1] > 0


def test_kb_add_shows_embedding_with_a_rate_and_an_eta(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SMARTCTX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("SMARTCTX_DATABASE_URL", raising=False)
    monkeypatch.setenv("SMARTCTX_RETRIEVAL_EMBEDDER", "hashing")
    monkeypatch.setenv("COLUMNS", "200")
    doc = tmp_path / "printers.md"
    doc.write_text("# Printers\n\n" + "\n\n".join(f"Toner tip {i}." for i in range(30)))
    result = CliRunner().invoke(app, ["kb", "add", str(doc)])
    assert result.exit_code == 0, result.output
    embedding = next(line for line in result.output.splitlines() if "embedding" in line)
    assert "texts/s" in embedding and "eta 0:00:00" in embedding
    total = embedding.split("/")[0].split()[-1]
    assert int(total) > 0
