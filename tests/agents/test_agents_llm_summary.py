"""Abstractive summaries through a chat model: scripted replies served by the loopback
OpenAI-compatible server, bad replies and failures included (the extractive summary stays)."""

from __future__ import annotations

from collections.abc import Callable

from smartctx.agents import Agent, OpenAIChatModel
from smartctx.agents.llm_summary import PROMPT, LLMSummarizer
from smartctx.agents.testing import OpenAICompatibleTestServer
from smartctx.core import HashingEmbedder, Slot, SlotKind, SlotState, get_counter
from smartctx.window import SUMMARY_PREFIX, ContextWindow, compression_preset

FACTS = [
    "Hello, I am Priya from the Platform team.",
    "My desk is in room 4B on the second floor.",
    "I work from Lisbon on Fridays.",
    "We decided to move the release to March 14.",
]


def abstract(source: str) -> str:
    """A scripted "abstractive" summary: the first five words of each summarised line."""
    lines = [line.removeprefix("- ") for line in source.splitlines() if line.startswith("- ")]
    return "; ".join(" ".join(line.split()[:5]) for line in lines) + "."


def invented(source: str) -> str:
    return abstract(source) + " Since 2019."


def chat(summary_reply: Callable[[str], str] | Exception) -> Callable[..., str]:
    """Replies "Noted, message N." to chat turns and ``summary_reply`` to summary requests."""

    def reply(messages: list[dict[str, str]]) -> str:
        if messages[0]["content"].startswith(PROMPT[:40]):
            if isinstance(summary_reply, Exception):
                raise summary_reply
            return summary_reply(messages[-1]["content"])
        return f"Noted, message {len(messages)}."

    return reply


async def run_turns(
    summary_reply: Callable[[str], str] | Exception,
) -> tuple[ContextWindow, list[list[dict[str, str]]]]:
    window = ContextWindow(
        50,
        counter=get_counter(),
        embedder=HashingEmbedder(),
        funnel=compression_preset(keep_recent=2),
    )
    window.add(Slot(SlotKind.SYSTEM, "You are a helpful assistant.", pinned=True))
    async with OpenAICompatibleTestServer(reply=chat(summary_reply)) as llm:
        model = OpenAIChatModel(llm.base_url, "test-model")
        agent = Agent(model, summarizer=LLMSummarizer(model))
        thread = agent.new_thread(window=window)
        for text in FACTS:
            await agent.run(text, thread)
        asked = [r.json["messages"] for r in llm.chat_requests]
    return window, asked


async def test_a_summary_the_funnel_writes_is_rewritten_by_the_model_with_provenance() -> None:
    window, asked = await run_turns(abstract)
    summaries = [s for s in window.active if s.kind is SlotKind.SUMMARY]
    assert len(summaries) == 1
    revised = summaries[0]
    # the name survives every roll-up, because each rolled-up summary is rewritten by the model
    assert revised.metadata["stage"] == "revise_summary"
    assert revised.text.startswith(SUMMARY_PREFIX + "Hello, I am Priya from")
    extractive = window.get(str(revised.metadata["revises"]))
    assert extractive.state is SlotState.SUMMARIZED  # kept in the log: auditable, reversible
    assert revised.provenance == extractive.provenance
    said = {window.get(i).text for i in revised.provenance}
    assert FACTS[0] in said
    summary_requests = [m for m in asked if m[0]["content"].startswith("Summarise")]
    assert summary_requests and FACTS[0] in summary_requests[0][-1]["content"]


async def test_an_invented_number_an_empty_reply_or_a_failure_keep_the_extractive_summary() -> None:
    for bad in (invented, lambda _source: "", RuntimeError("model down")):
        window, _ = await run_turns(bad)
        summaries = [s for s in window.active if s.kind is SlotKind.SUMMARY]
        assert summaries, bad
        assert all("revises" not in s.metadata for s in summaries)
        assert all(s.text.startswith(SUMMARY_PREFIX) for s in summaries)
