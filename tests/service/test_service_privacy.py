"""Replies never repeat a detected secret, and the pair stored for the turn holds none
(issue 11: replies repeated card numbers, e-mail addresses and passwords)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from smartctx.service.client import SmartctxClient

CARD = "4111 1111 1111 1111"
PASSWORD = "Tr0ub4dor&3"


async def test_replies_and_stored_pairs_are_redacted(start_server: Any, tmp_path: Path) -> None:
    handle = start_server(hooks=None)
    async with SmartctxClient(handle.url, owner="kim") as kim:
        first = await kim.send(f"My password is {PASSWORD} and my card is {CARD}.")
        again = await kim.send("What is my password and my card?", context_id=first.context_id)
    for reply in (first.text, again.text):
        assert PASSWORD not in reply and CARD not in reply
    with sqlite3.connect(tmp_path / "service.db") as conn:
        rows = conn.execute("SELECT user_text || assistant_text FROM mem_pairs").fetchall()
    assert rows and not [r for (r,) in rows if PASSWORD in r or CARD in r]


async def test_an_address_the_knowledge_base_publishes_is_not_redacted(start_server: Any) -> None:
    # the shipped laptops guide names helpdesk@example.com and security@example.com
    handle = start_server(hooks=None)
    async with SmartctxClient(handle.url, owner="kim") as kim:
        reply = await kim.send("Who do I tell if my laptop is stolen?")
        mine = await kim.send(
            "My e-mail is kim.private@example.org. Who do I tell if my laptop is stolen?",
            context_id=reply.context_id,
        )
    assert "helpdesk@example.com" in reply.text and "REDACTED" not in reply.text
    assert "kim.private@example.org" not in mine.text


async def test_a_streaming_model_is_not_streamed_a_secret_of_the_thread(
    start_server: Any,
) -> None:
    from smartctx.agents.testing import OpenAICompatibleTestServer

    def echo_thread(messages: list[dict[str, Any]]) -> str:  # repeats what the user said
        return " ".join(str(m["content"]) for m in messages if m["role"] == "user")

    with OpenAICompatibleTestServer(reply=echo_thread) as model:
        handle = start_server(hooks=None, llm_base_url=model.base_url)
        async with SmartctxClient(handle.url, owner="kim") as kim:
            first = await kim.send(f"My card is {CARD}.")
            later = await kim.send("What did I tell you?", context_id=first.context_id)
    assert CARD not in first.text and CARD not in later.text
