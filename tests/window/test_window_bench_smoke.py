"""Smoke test of ``smartctx bench window`` (shape of its JSON; no timing targets) and of the
benchmark docs writer."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from smartctx.bench.docs import write_section
from smartctx.bench.window import SeedWindow, make_slots
from smartctx.cli import app
from smartctx.core import Slot, SlotKind


def test_cli_writes_json_and_docs_section(tmp_path: Path) -> None:
    docs = tmp_path / "benchmarks.md"
    docs.write_text("# B\n\n<!-- bench:window -->\nold\n<!-- /bench:window -->\n\nkeep me\n")
    out = tmp_path / "w.json"
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "window",
            "--quick",
            "--slots",
            "400",
            "--ingest",
            "40",
            "--ingest-embedder",
            "hashing",
            "--no-memory",
            "--json",
            str(out),
            "--docs",
            str(docs),
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert set(data["window"]) == {"8k", "128k", "1M"}
    for figures in data["window"].values():
        for key in ("smartctx_us_median", "smartctx_us_p99", "baseline_us_median"):
            assert isinstance(figures[key], float) and figures[key] > 0
    assert data["window"]["8k"]["smartctx_filled_at"] is not None
    assert data["window"]["1M"]["smartctx_filled_at"] is None  # 400 slots never fill 1M
    assert data["ingest"]["embedder_per_s"] > 0 and data["ingest"]["smartctx_per_s"] > 0
    assert int(data["machine"]["cpus"]) >= 1 and data["machine"]["python"]
    text = docs.read_text()
    assert "old" not in text and "keep me" in text
    assert "Command: `smartctx bench window --slots 400`" in text
    assert (tmp_path / "bench-window.png").stat().st_size > 1000


def test_write_section_appends_missing_markers(tmp_path: Path) -> None:
    path = tmp_path / "b.md"
    path.write_text("# B\n")
    write_section("x", "body one", path)
    write_section("x", "body two", path)
    assert path.read_text() == "# B\n\n<!-- bench:x -->\nbody two\n<!-- /bench:x -->\n"


def test_inputs_are_deterministic_and_baseline_is_the_seed_algorithm() -> None:
    a, b = make_slots(300), make_slots(300)
    assert [(s.kind, s.text) for s in a] == [(s.kind, s.text) for s in b]
    assert a[0].kind is SlotKind.SYSTEM
    seed = SeedWindow(10)
    seed.add(Slot(SlotKind.SYSTEM, "s", pinned=True, tokens=4))
    seed.add(Slot(SlotKind.RAG_DOC, "d", tokens=3))
    seed.add(Slot(SlotKind.AGENT, "a", tokens=3))
    seed.add(Slot(SlotKind.USER, "u", tokens=3))
    assert [s.text for s in seed.slots] == ["s", "d", "u"]
