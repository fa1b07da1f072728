"""``smartctx memory add|search|list|get|update|delete|history|export|import`` on a data dir."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from smartctx.cli import app


@pytest.fixture
def cli(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("SMARTCTX_DATA_DIR", str(data_dir))
    monkeypatch.delenv("SMARTCTX_DATABASE_URL", raising=False)
    monkeypatch.setenv("SMARTCTX_RETRIEVAL_EMBEDDER", "hashing")
    runner = CliRunner()

    def run(*args: str, code: int = 0) -> str:
        result = runner.invoke(app, ["memory", *args])
        assert result.exit_code == code, result.output
        return result.stdout if code == 0 else result.stderr

    return run


def test_add_search_update_history_delete(cli: Any) -> None:
    [added] = json.loads(cli("add", "I prefer aisle seats.", "--owner", "alice", "--json"))
    mid = added["id"]
    assert added["event"] == "ADD"
    cli("add", "My laptop is a ThinkPad.", "--owner", "alice", "--agent-id", "it")
    [hit] = json.loads(cli("search", "aisle seats", "--owner", "alice", "--json"))
    assert hit["id"] == mid and hit["score"] > 0
    listed = json.loads(cli("list", "--owner", "alice", "--agent-id", "it", "--json"))
    assert [m["memory"] for m in listed["results"]] == ["My laptop is a ThinkPad."]
    cli("update", mid, "I prefer window seats.", "--owner", "alice")
    got = json.loads(cli("get", mid, "--owner", "alice", "--json"))
    assert (got["memory"], got["version"]) == ("I prefer window seats.", 2)
    events = json.loads(cli("history", mid, "--owner", "alice", "--json"))
    assert [e["event"] for e in events] == ["ADD", "UPDATE"]
    assert "deleted" in cli("delete", mid, "--owner", "alice")
    failed = cli("get", mid, "--owner", "alice", code=1)
    assert failed.strip().startswith("error: not_found") and len(failed.strip().splitlines()) == 1
    assert json.loads(cli("list", "--owner", "bob", "--json"))["results"] == []


def test_export_then_import_into_another_owner(cli: Any, tmp_path: Path) -> None:
    [added] = json.loads(cli("add", "I live in Busan.", "--owner", "alice", "--json"))
    out = tmp_path / "alice.jsonl"
    cli("export", "--owner", "alice", "-o", str(out))
    assert "imported 1, skipped 0" in cli("import", str(out), "--owner", "bob")
    assert "imported 0, skipped 1" in cli("import", str(out), "--owner", "bob")
    copy = json.loads(cli("get", added["id"], "--owner", "bob", "--json"))
    assert copy["memory"] == "I live in Busan."
    assert copy["origin"]["original_owner"] == "alice"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"memory": "ok"}\nnot json\n')
    assert "line 2" in cli("import", str(bad), "--owner", "bob", code=1)
