"""Fact extraction and consolidation through a chat model, against scripted replies served by
the loopback OpenAI-compatible server (malformed answers included)."""

from __future__ import annotations

import json

import pytest

from smartctx.agents import LongTermMemoryProvider, OpenAIChatModel
from smartctx.agents.llm_memory import LLMConsolidator, parse_operations
from smartctx.agents.testing import OpenAICompatibleTestServer


def ops(*operations: dict[str, str]) -> str:
    return json.dumps({"operations": list(operations)})


class Script:
    """Replies served in order by the loopback server (the next one set by the test)."""

    def __init__(self) -> None:
        self.next = ops()

    def __call__(self, _messages: list[dict[str, str]]) -> str:
        return self.next


async def test_add_then_update_supersedes_with_validity_times() -> None:
    replies = iter(
        [
            ops({"op": "add", "text": "My desk is 4B.", "attribute": "desk"}),
            "",  # replaced below once the first id is known
        ]
    )
    state: dict[str, str] = {}

    def reply(messages: list[dict[str, str]]) -> str:
        if not state:
            state["first"] = "done"
            return next(replies)
        listed = messages[-1]["content"]
        old_id = listed.split("id=")[1].split(":")[0]
        return ops({"op": "update", "id": old_id, "text": "My desk is 5C.", "attribute": "desk"})

    async with OpenAICompatibleTestServer(reply=reply) as llm:
        model = OpenAIChatModel(llm.base_url, "memory-model")
        memory = LongTermMemoryProvider("dana", consolidator=LLMConsolidator(model))
        await memory.remember("I sit at desk 4B these days.", thread="t1")
        await memory.remember("They moved me, I am at 5C now.", thread="t2")
        asked = [r.json["messages"] for r in llm.chat_requests]
    found = await memory.recall("Where is my desk?", thread="t3")
    assert [i.text for i, _ in found if i.kind == "fact"] == ["My desk is 5C."]
    history = await memory.history("desk")
    assert [(h["text"], h["current"]) for h in history] == [
        ("My desk is 4B.", False),
        ("My desk is 5C.", True),
    ]
    assert history[0]["valid_to"] == history[1]["valid_from"]
    assert "My desk is 4B." in asked[1][-1]["content"]  # the model saw the stored fact


async def test_delete_retracts_and_keep_changes_nothing() -> None:
    script = Script()
    async with OpenAICompatibleTestServer(reply=script) as llm:
        model = OpenAIChatModel(llm.base_url, "memory-model")
        memory = LongTermMemoryProvider("eli", consolidator=LLMConsolidator(model))
        script.next = ops({"op": "add", "text": "My car is a red Fiat.", "attribute": "car"})
        await memory.remember("I drive a red Fiat.")
        (fact,) = [i for i in await memory.items() if i.kind == "fact"]
        script.next = ops({"op": "keep", "id": fact.id})
        await memory.remember("Still driving that red Fiat of mine.")
        script.next = ops({"op": "delete", "id": fact.id})
        await memory.remember("I sold my car last week.")
    assert [i for i, _ in await memory.recall("What car do I drive?") if i.kind == "fact"] == []
    kinds = [h["kind"] for h in await memory.history("car")]
    assert kinds == ["fact", "retraction"]


@pytest.mark.parametrize(
    "bad",
    [
        "Sure! The user's desk is 5C.",
        '{"operations": [{"op": "add", "text": "My desk is 5C."',
        '{"ops": []}',
        '[{"op": "add", "text": "My desk is 5C."}]',
    ],
)
async def test_a_malformed_answer_falls_back_to_the_offline_extractor(bad: str) -> None:
    async with OpenAICompatibleTestServer(reply=lambda _m: bad) as llm:
        model = OpenAIChatModel(llm.base_url, "memory-model")
        memory = LongTermMemoryProvider("fay", consolidator=LLMConsolidator(model))
        stored = await memory.remember("My desk is 5C.")
    assert [i.text for i in stored if i.kind == "fact"] == ["My desk is 5C."]


async def test_a_failing_model_falls_back_and_questions_are_not_sent() -> None:
    async with OpenAICompatibleTestServer() as llm:
        llm.enqueue(500, {"error": "boom"})
        model = OpenAIChatModel(llm.base_url, "memory-model")
        memory = LongTermMemoryProvider("gus", consolidator=LLMConsolidator(model))
        assert [i.text for i in await memory.remember("My badge number is 7731.")] == [
            "My badge number is 7731."
        ]
        await memory.remember("What is my badge number?")
        assert len(llm.chat_requests) == 1


def test_parse_operations_ignores_unknown_ids_and_empty_texts() -> None:
    reply = (
        "```json\n"
        + ops(
            {"op": "update", "id": "nope", "text": "x"},
            {"op": "add", "text": "  "},
            {"op": "add", "text": "My team is Platform.", "attribute": " Team "},
            {"op": "explode"},
        )
        + "\n```"
    )
    (op,) = parse_operations(reply, known={"a1"}) or []
    assert (op.op, op.text, op.attribute) == ("add", "My team is Platform.", "team")
