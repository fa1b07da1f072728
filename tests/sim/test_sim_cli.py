"""``smartctx simulate`` end to end: the command starts its own defender and stops it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from smartctx.cli import app


@pytest.fixture(autouse=True)
def _hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMARTCTX_EMBEDDER", "hashing")
    monkeypatch.setenv("SMARTCTX_RETRIEVAL_EMBEDDER", "hashing")


def test_simulate_single_run_and_compare(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "out"
    # seed 5 opens with context flooding: FIFO loses at turn 4
    args = ["simulate", "--seed", "5", "--defender-memory", "fifo", "--max-turns", "4"]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "VICTORY: the defender said the phrase at turn 4" in result.output
    assert (out / "trace.json").exists() and (out / "conversation.txt").exists()

    docs = tmp_path / "benchmarks.md"
    docs.write_text("# Benchmarks\n\n<!-- bench:simulate -->\n<!-- /bench:simulate -->\n")
    summary = tmp_path / "compare.json"
    compare = ["simulate", "--compare", "--runs", "1", "--seed", "5", "--max-turns", "4"]
    result = runner.invoke(
        app, [*compare, "--out", str(out), "--json", str(summary), "--docs", str(docs)]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(summary.read_text()) == {
        "runs": 1,
        "fifo": {"success_rate": 1.0, "median_turns": 4.0},
        "smart": {"success_rate": 0.0, "median_turns": None},
    }
    text = docs.read_text()
    assert "| fifo | 100% | 4 | 1/1 |" in text and "| smart | 0% | - | 0/1 |" in text
    assert "Machine:" in text and "smartctx simulate --compare" in text


def test_simulate_reports_an_unreachable_defender(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9"  # discard port: nothing listens there
    result = CliRunner().invoke(
        app, ["simulate", "--defender-url", url, "--out", str(tmp_path), "--max-turns", "3"]
    )
    assert result.exit_code == 1
    assert "unreachable" in result.output and (tmp_path / "trace.json").exists()
