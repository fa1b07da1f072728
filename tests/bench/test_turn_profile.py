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
    pooled = compare_markdown({**_result(1.0), "checkouts_per_turn": 10.3}, _result(1.0))
    assert "| connection pool checkouts per turn | 10.3 | - |" in pooled


def test_a_profile_counts_statements_and_pool_checkouts_of_real_turns() -> None:
    from smartctx.bench.turn_profile import markdown, run

    result = run(turns=2, warmup=2)
    assert result["errors"] == 0
    assert result["sql_per_turn"] > 0 and result["checkouts_per_turn"] > 0
    assert f"{result['checkouts_per_turn']} pool checkouts per turn" in markdown(result)
    first = result["sql_first_turns"]  # the new owner's first turns, one count each
    assert len(first) == 2 and all(n > 0 for n in first)
    assert f"{first[0]} / {first[1]} SQL statements" in markdown(result)
