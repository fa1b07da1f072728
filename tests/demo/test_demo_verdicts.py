"""The demo's scenarios over real HTTP, and its verdicts (which must be able to fail)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from smartctx.cli import app
from smartctx.core import HashingEmbedder, Settings
from smartctx.demo import ScenarioResult, judge, run_scenarios
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.service.server import ServerHandle, serve


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    """A server with the default hooks (personal memory), hashing embeddings for speed."""
    db = Path(tmp_path_factory.mktemp("demo")) / "demo.db"
    kb = KnowledgeBase.builtin(embedder=HashingEmbedder())
    handle = serve(
        Settings(database_url=f"sqlite+aiosqlite:///{db}"),
        host="127.0.0.1",
        port=0,
        embedder=HashingEmbedder(),
        kb=kb,
    )
    yield handle
    handle.stop()


@pytest.fixture(scope="module")
def results(demo_server: ServerHandle) -> list[ScenarioResult]:
    import asyncio

    return asyncio.run(run_scenarios(demo_server.url))


def test_both_verdicts_pass(results: list[ScenarioResult]) -> None:
    verdicts = [judge(r) for r in results]
    assert [(v.scenario, v.passed) for v in verdicts] == [
        ("eviction", True),
        ("compression", True),
    ], [v.line() for v in verdicts]
    assert all(ok for v in verdicts for _, ok in v.checks)
    eviction, compression = results
    assert [s.title[:2] for s in eviction.steps] == ["1.", "2.", "3.", "4."]
    assert compression.budget == 100
    assert all(s.snapshot["tokens_used"] <= 100 for s in compression.steps)


def test_verdicts_fail_when_the_evidence_is_missing(results: list[ScenarioResult]) -> None:
    eviction, compression = copy.deepcopy(results)
    eviction.steps[2].events = [e for e in eviction.steps[2].events if e["kind"] != "evicted"]
    verdict = judge(eviction)
    assert not verdict.passed and "an agent reply was evicted at step 3" in verdict.reason
    for step in compression.steps:
        step.events = [e for e in step.events if e["kind"] != "summarized"]
    verdict = judge(compression)
    assert not verdict.passed and "provenance" in verdict.reason


def test_demo_cli_against_a_running_server(demo_server: ServerHandle) -> None:
    outcome = CliRunner().invoke(app, ["demo", "--url", demo_server.url])
    assert outcome.exit_code == 0, outcome.output
    assert "PASS eviction" in outcome.output and "PASS compression" in outcome.output
    assert "tool-log burst" in outcome.output


def test_demo_cli_with_an_admin_key_against_a_server_that_requires_one(tmp_path: Path) -> None:
    import asyncio

    from smartctx.service.auth import KeyStore
    from smartctx.store import Database

    url = f"sqlite+aiosqlite:///{tmp_path / 'auth.db'}"

    async def admin_key() -> str:
        db = Database(url)
        try:
            await db.migrate()
            return (await KeyStore(db).create(admin=True))[1]
        finally:
            await db.close()

    key = asyncio.run(admin_key())
    kb = KnowledgeBase.builtin(embedder=HashingEmbedder())
    settings = Settings(database_url=url, auth=True)
    with serve(settings, host="127.0.0.1", port=0, embedder=HashingEmbedder(), kb=kb) as handle:
        outcome = CliRunner().invoke(app, ["demo", "--url", handle.url, "--api-key", key])
    assert outcome.exit_code == 0, outcome.output
    assert "PASS eviction" in outcome.output and "PASS compression" in outcome.output
