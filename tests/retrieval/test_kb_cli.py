"""``smartctx kb``: add, list, search and remove against the configured database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from smartctx.cli import app

PRINTERS = "# Printers\n\n## Toner\n\nSpare toner cartridges are in cupboard ZX-81 on floor 3.\n"


@pytest.fixture
def runner(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("SMARTCTX_DATA_DIR", str(data_dir))
    monkeypatch.delenv("SMARTCTX_DATABASE_URL", raising=False)
    monkeypatch.setenv("SMARTCTX_RETRIEVAL_EMBEDDER", "hashing")
    return CliRunner()


def test_add_list_search_remove_round_trip(
    runner: CliRunner, tmp_path: Path, data_dir: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "printers.md").write_text(PRINTERS)

    added = runner.invoke(app, ["kb", "add", str(docs), "--owner", "acme"])
    assert added.exit_code == 0, added.output
    assert "printers.md" in added.output and "added" in added.output
    assert (data_dir / "smartctx.db").exists()

    again = runner.invoke(app, ["kb", "add", str(docs / "printers.md"), "--owner", "acme"])
    assert "unchanged" in again.output

    listed = runner.invoke(app, ["kb", "list", "--owner", "acme", "--no-builtin", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.stdout)
    assert [(r["name"], r["origin"], r["chunks"]) for r in rows] == [("printers.md", "stored", 1)]

    everything = runner.invoke(app, ["kb", "list", "--owner", "acme", "--json"])
    assert {r["name"] for r in json.loads(everything.stdout)} >= {"printers.md", "vpn.md"}

    found = runner.invoke(app, ["kb", "search", "toner cartridges", "--owner", "acme", "--json"])
    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)[0]["source_id"] == "kb:printers.md#1"

    elsewhere = runner.invoke(app, ["kb", "search", "toner", "--owner", "globex", "--json"])
    assert json.loads(elsewhere.stdout) == []

    removed = runner.invoke(app, ["kb", "remove", "printers.md", "--owner", "acme"])
    assert removed.exit_code == 0, removed.output
    listed = runner.invoke(app, ["kb", "list", "--owner", "acme", "--no-builtin", "--json"])
    assert json.loads(listed.stdout) == []


def test_search_says_when_nothing_is_relevant(runner: CliRunner) -> None:
    result = runner.invoke(app, ["kb", "search", "Thanks! How is the weather today?"])
    assert result.exit_code == 0, result.output
    assert "nothing relevant" in result.output


def test_errors_exit_with_a_message(runner: CliRunner, tmp_path: Path) -> None:
    missing = runner.invoke(app, ["kb", "add", str(tmp_path / "missing.md")])
    assert missing.exit_code == 1
    assert "no such file" in missing.output
    unknown = runner.invoke(app, ["kb", "remove", "nope.md"])
    assert unknown.exit_code == 1
    assert "no document" in unknown.output


def test_every_command_help_has_an_example(runner: CliRunner) -> None:
    for command in ("add", "list", "search", "remove"):
        result = runner.invoke(app, ["kb", command, "--help"])
        assert result.exit_code == 0
        assert "Example: smartctx kb" in result.output
