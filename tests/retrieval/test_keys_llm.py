"""LLMExtractor against the loopback OpenAI-compatible server: scripted and broken replies."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from smartctx.agents.openai_model import OpenAIChatModel
from smartctx.agents.testing import OpenAICompatibleTestServer
from smartctx.bench.locomo_llm import complete
from smartctx.core.slots import Slot, SlotKind
from smartctx.retrieval.keys_llm import LLMExtractor, parse, render
from smartctx.retrieval.tiered import TieredRecaller


def turn(n: int, speaker: str, text: str) -> Slot:
    meta: dict[str, Any] = {"speaker": speaker, "time": "2023-05-08T13:56", "session": 1}
    return Slot(SlotKind.USER, text, id=f"t{n}", source_id=f"D1:{n}", metadata=meta)


SESSION = [
    turn(1, "Caroline", "I went to a support group yesterday."),
    turn(2, "Melanie", "How was it?"),
    turn(3, "Caroline", "Great, everyone was so kind."),
]


@pytest.fixture
def server() -> Iterator[OpenAICompatibleTestServer]:
    with OpenAICompatibleTestServer() as srv:
        yield srv


def extractor(server: OpenAICompatibleTestServer) -> LLMExtractor:
    return LLMExtractor(complete(OpenAIChatModel(server.base_url, "test-model")))


def reply(text: str) -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": text}}]}


def test_scripted_facts_become_dated_keys_beside_the_offline_ones(
    server: OpenAICompatibleTestServer,
) -> None:
    items = [
        {"fact": "Caroline went to an LGBTQ support group.", "date": "2023-05-07", "turns": [1, 3]},
        {"fact": "Melanie asked about it.", "date": None, "turns": [2]},
    ]
    server.enqueue(body=reply("Here you go:\n```json\n" + json.dumps(items) + "\n```"))
    ex = extractor(server)
    keys = ex.facts(SESSION)
    llm = [k for k in keys if ":llm" in k.id]
    assert [k.provenance for k in llm] == [("t1", "t3"), ("t2",)]
    assert llm[0].text == "Caroline went to an LGBTQ support group. (7 May 2023)"
    assert llm[1].span is not None and llm[1].span[0].day == 8  # no date: the turn's day
    assert len(keys) == len(SESSION) + 2 and ex.failures == 0
    prompt = server.chat_requests[0].json
    assert prompt is not None and "1. Caroline: I went to a support group yesterday." in str(prompt)
    assert prompt["temperature"] == 0
    # The same session again is remembered, not re-asked.
    assert ex.facts(SESSION) == keys and len(server.chat_requests) == 1


@pytest.mark.parametrize(
    "body",
    [
        reply("I could not find any facts, sorry."),
        reply("[{'fact': 'single quotes are not JSON'}]"),
        reply(
            '[{"fact": "", "turns": [1]}, {"fact": "no turns"}, {"fact": "x", "turns": [9, true]}]'
        ),
        reply('{"fact": "an object, not a list", "turns": [1]}'),
        {"choices": []},
    ],
)
def test_malformed_replies_keep_the_offline_keys(
    server: OpenAICompatibleTestServer, body: dict[str, Any]
) -> None:
    server.enqueue(body=body)
    ex = extractor(server)
    keys = ex.facts(SESSION)
    assert [k.id for k in keys] == ["fact:t1", "fact:t2", "fact:t3"]
    assert ex.failures == 1


def test_a_failing_server_keeps_the_offline_keys(server: OpenAICompatibleTestServer) -> None:
    server.enqueue(status=500, body="overloaded")
    ex = extractor(server)
    assert len(ex.facts(SESSION)) == 3 and ex.failures == 1


def test_a_bad_date_is_dropped_and_the_recaller_uses_llm_keys(
    server: OpenAICompatibleTestServer,
) -> None:
    items = [{"fact": "Caroline adopted a dog named Rex.", "date": "someday", "turns": [3]}]
    keys = parse(json.dumps(items), SESSION)
    assert keys[0].span is not None and keys[0].span[0].day == 8
    assert "Session date: 2023-05-08" in render(SESSION)
    server.reply = lambda messages: json.dumps(items)
    recaller = TieredRecaller(extractor=extractor(server))
    found = recaller.rank("What is the name of Caroline's dog?", SESSION, 1)
    assert [s.id for s, _ in found] == ["t3"]
