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
