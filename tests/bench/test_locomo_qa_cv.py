"""``smartctx bench locomo --qa`` against the loopback fake, ``--cv`` and ``--holdout``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from smartctx.agents.testing import OpenAICompatibleTestServer
from smartctx.bench.locomo_cv import GRID, cross_validate, grid
from smartctx.bench.locomo_data import load_locomo
from smartctx.bench.locomo_qa import judged_correct, locomo_f1, normalize_answer, token_f1
from smartctx.cli import app
from smartctx.retrieval.tiered import TierWeights


def test_the_papers_f1() -> None:
    assert normalize_answer("The Rex, and a dog!") == "rex dog"
    assert token_f1("Rex", "rex") == 1.0
    assert token_f1("a puppy named Rex", "Rex") == pytest.approx(0.5)  # P 1/3, R 1
    assert token_f1("nothing", "Rex") == 0.0
    # Multi-hop: each gold part meets its best predicted part.
    assert locomo_f1("Kyoto, Paris", "Paris, Kyoto", 1) == 1.0
    assert locomo_f1("Kyoto", "Paris, Kyoto", 1) == 0.5
    # Open-domain: the gold answer is cut at ';'.
    assert locomo_f1("yes", "yes; she is supportive", 3) == 1.0
    assert judged_correct("CORRECT") and judged_correct("correct.")
    assert not judged_correct("WRONG, not CORRECT") and not judged_correct("maybe")


def test_qa_asks_three_prompts_and_scores_scripted_answers(
    locomo_file: Path, tmp_path: Path
) -> None:
    def answer(messages: list[dict[str, str]]) -> str:
        text = messages[-1]["content"]
        if text.startswith("Label an answer"):
            return "CORRECT" if "Generated answer: Rex" in text else "WRONG"
        question = text.rsplit("Question: ", 1)[1]
        if "puppy" not in question:
            return "I don't know"
        # The evidence turn is in the prompt only if retrieval (or the window) kept it.
        return "Rex" if "named him Rex" in text or "puppy Rex" in text else "no idea"

    out = tmp_path / "qa.json"
    with OpenAICompatibleTestServer(reply=answer) as server:
        result = CliRunner().invoke(
            app,
            [
                "bench",
                "locomo",
                "--data",
                str(locomo_file),
                "--embedder",
                "none",
                "--qa",
                "--qa-budget",
                "256",
                "--llm-url",
                server.base_url,
                "--llm-model",
                "scripted",
                "--judge-model",
                "judge",
                "--json",
                str(out),
            ],
        )
        models = {r.json["model"] for r in server.chat_requests if r.json}
    assert result.exit_code == 0, result.output
    qa = json.loads(out.read_text())["qa"]
    assert qa["questions"] == 4 and qa["model"] == "scripted" and qa["judge"] == "judge"
    assert models == {"scripted", "judge"}
    systems = qa["systems"]
    # Both puppy questions (category 4) are answered from smartctx's and the full prompts; the
    # FIFO window of 256 tokens only holds the last turns of the second session.
    assert systems["smartctx"]["f1"]["4"] == systems["full"]["f1"]["4"] == 1.0
    assert systems["fifo"]["f1"]["4"] == 0.0
    assert systems["smartctx"]["judge"]["4"] == 1.0 and systems["fifo"]["judge"]["4"] == 0.0
    assert systems["full"]["f1"]["1"] == 0.0  # the travel question is answered "I don't know"
    first = qa["answers"][0]
    assert first["gold"] == "Rex" and first["smartctx"]["answer"] == "Rex"


def test_qa_without_a_model_is_one_clear_line(
    locomo_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SMARTCTX_LLM_BASE_URL", raising=False)
    args = ["bench", "locomo", "--data", str(locomo_file), "--embedder", "none", "--qa"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    assert "no chat model configured" in result.output
    assert "questions" not in result.output  # refused before any work


def test_cross_validation_holds_each_conversation_out(locomo_file: Path) -> None:
    data = load_locomo(locomo_file)
    settings = [TierWeights(hop=0.0, speaker=0.0), TierWeights()]
    result = cross_validate(data, embedder=None, ks=(1, 5), settings=settings)
    out = result.to_json()
    assert out["settings"] == 2
    assert set(out["folds"]) == {"conv-a", "conv-b"}
    for table in (out["cross_validated"], out["in_sample"]):
        assert set(table) == {"all", "1", "4"}
        assert all(0.0 <= v <= 1.0 for row in table.values() for v in row.values())
    # In-sample picks the best setting for all the data: never below the cross-validated mean.
    assert out["in_sample"]["all"]["5"] >= out["cross_validated"]["all"]["5"]
    assert len(grid()) == len(set(grid())) == 1296 == _product()


def _product() -> int:
    n = 1
    for values in GRID.values():
        n *= len(values)
    return n


def test_cli_cv_and_holdout(locomo_file: Path, tmp_path: Path) -> None:
    dev = tmp_path / "dev.json"
    dev.write_text(json.dumps(json.loads(locomo_file.read_text())[:1]), encoding="utf-8")
    out = tmp_path / "out.json"
    docs = tmp_path / "benchmarks.md"
    args = ["bench", "locomo", "--data", str(dev), "--embedder", "none", "--cv"]
    args += ["--holdout", str(locomo_file), "--json", str(out), "--docs", str(docs)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["conversations"] == 1 and data["holdout"]["conversations"] == 1
    assert data["cv"]["settings"] == 1296 and list(data["cv"]["folds"]) == ["conv-a"]
    text = docs.read_text()
    assert "cross-validated (leave one conversation out)" in text
    assert "held-out conversations (1)" in text and "--llm-url" in text
