"""``smartctx memory`` commands against a data directory."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from smartctx.cli import app
from smartctx.core.settings import Settings
from smartctx.memory import PairIn, PersonalMemory
from smartctx.store import Database


def _seed(data_dir: Path) -> None:
    async def main() -> None:
        db = Database(Settings(data_dir=data_dir).resolved_database_url())
        await db.migrate()
        memory = PersonalMemory(db)
        await memory.add_pair("alice", PairIn("I like jazz", id="p1", session_id="s"))
        await memory.add_pair("bob", PairIn("I like opera", id="p1", session_id="s"))
        await db.close()

    asyncio.run(main())


def test_compact_profile_accept_and_forget(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMARTCTX_DATA_DIR", str(data_dir))
    _seed(data_dir)
    runner = CliRunner()
    out = runner.invoke(app, ["memory", "compact", "--force", "--json"])
    assert out.exit_code == 0, out.output
    reports = json.loads(out.output[out.output.index("[") :])
    assert sorted(r["owner"] for r in reports) == ["alice", "bob"]
    out = runner.invoke(app, ["memory", "profile", "alice", "--json"])
    [item] = json.loads(out.output)
    assert (item["value"], item["status"]) == ("jazz", "candidate")
    out = runner.invoke(app, ["memory", "accept", "alice", item["id"]])
    assert "confirmed" in out.output
    out = runner.invoke(app, ["memory", "wrong", "bob", item["id"]])
    assert out.exit_code == 1 and "not_found" in out.output
    out = runner.invoke(app, ["memory", "forget", "alice", "--yes"])
    assert out.exit_code == 0 and "forgot alice" in out.output
    out = runner.invoke(app, ["memory", "profile", "alice", "--json"])
    assert json.loads(out.output) == []
    out = runner.invoke(app, ["memory", "profile", "bob", "--json"])
    assert [i["value"] for i in json.loads(out.output)] == ["opera"]
