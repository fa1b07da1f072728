"""Chat-model test doubles and the settings switch."""

from __future__ import annotations

import pytest

from smartctx.agents import (
    ChatModel,
    FunctionModel,
    GroundedResponder,
    OpenAIChatModel,
    ScriptedModel,
    model_from_settings,
)
from smartctx.core import InvalidInput, Settings, UserError

MESSAGES = [{"role": "user", "content": "hi"}]


async def test_scripted_model_replies_in_order_and_records_calls() -> None:
    model = ScriptedModel(["one", "two"])
    assert isinstance(model, ChatModel)
    assert await model.complete(MESSAGES) == "one"
    sent = [{"role": "user", "content": "again"}]
    assert await model.complete(sent, temperature=0.2) == "two"
    sent[0]["content"] = "changed later"
    assert model.calls == [MESSAGES, [{"role": "user", "content": "again"}]]
    assert model.temperatures == [None, 0.2]
    assert model.remaining == 0


async def test_scripted_model_says_clearly_when_exhausted() -> None:
    model = ScriptedModel(["only"])
    await model.complete(MESSAGES)
    with pytest.raises(UserError, match="1 replies were scripted"):
        await model.complete(MESSAGES)


async def test_function_model_accepts_sync_and_async_functions() -> None:
    def sync_fn(messages: list[dict[str, str]]) -> str:
        return f"{len(messages)} message(s)"

    async def async_fn(messages: list[dict[str, str]]) -> str:
        return messages[-1]["content"].upper()

    assert await FunctionModel(sync_fn).complete(MESSAGES) == "1 message(s)"
    model = FunctionModel(async_fn)
    assert await model.complete(MESSAGES) == "HI"
    assert model.calls == [MESSAGES]


async def test_function_model_rejects_non_text_results() -> None:
    model = FunctionModel(lambda messages: 42)  # type: ignore[arg-type,return-value]
    with pytest.raises(UserError, match="returned int"):
        await model.complete(MESSAGES)


async def test_malformed_messages_are_invalid_input() -> None:
    with pytest.raises(InvalidInput):
        await ScriptedModel(["x"]).complete([{"content": "no role"}])


def test_model_from_settings_is_offline_by_default() -> None:
    assert isinstance(model_from_settings(Settings(llm_base_url=None)), GroundedResponder)


def test_model_from_settings_uses_the_configured_endpoint() -> None:
    settings = Settings(
        llm_base_url="http://127.0.0.1:9/v1", llm_model="llama3", llm_api_key="k", llm_timeout=5
    )
    model = model_from_settings(settings)
    assert isinstance(model, OpenAIChatModel)
    assert (model.url, model.model, model.api_key, model.timeout) == (
        "http://127.0.0.1:9/v1/chat/completions",
        "llama3",
        "k",
        5,
    )
