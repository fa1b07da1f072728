"""The top-costs table of ``smartctx bench profile``: before and after, side by side."""

from __future__ import annotations

from typing import Any

from smartctx.bench.turn_profile import compare_markdown


def _result(ms: float) -> dict[str, Any]:
    top = [{"function": "smartctx: turn", "ms_per_turn": ms}]
    return {"wall_ms_per_turn": ms, "cpu_ms_per_turn": ms / 2, "sql_per_turn": 30.0, "top": top}


def test_compare_names_what_before_measured_and_lists_both_columns() -> None:
    text = compare_markdown(_result(400.0), _result(100.0))
    assert "commit b37fda5" in text  # no label: the first round's baseline
    labelled = compare_markdown({**_result(400.0), "label": "commit abc"}, _result(100.0))
    assert "on commit abc and after" in labelled
    assert "| `smartctx: turn` | 400.0 | 100.0 |" in labelled
    assert "| CPU ms per turn (all threads) | 200.0 | 50.0 |" in labelled
    embeds = compare_markdown({**_result(1.0), "embedded_per_turn": 3.0}, _result(1.0))
    assert "| texts embedded per turn | 3.0 | - |" in embeds
