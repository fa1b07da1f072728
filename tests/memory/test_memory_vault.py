"""Stored pairs hold no detected secret in the clear (issue 11); with
``secret_copies="encrypted"`` the originals are kept under a Fernet key, and forgetting the pair
deletes that copy too."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from smartctx.core.clock import ManualClock
from smartctx.core.errors import ConfigError
from smartctx.core.settings import Settings
from smartctx.memory import PersonalMemory
from smartctx.memory.pairs import PairIn
from smartctx.memory.vault import SecretVault
from smartctx.store import Database

SECRET_TURN = "my password is Tr0ub4dor&3 and my IBAN is DE89 3704 0044 0532 0130 00"


def _pair_rows(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT user_text, assistant_text FROM mem_pairs").fetchall()


async def test_pairs_are_stored_redacted_with_no_copy(
    memory: PersonalMemory, tmp_path: Path
) -> None:
    await memory.add_pair("ann", PairIn(SECRET_TURN, "Noted, Tr0ub4dor&3.", id="p1"))
    [(user, assistant)] = _pair_rows(tmp_path / "memory.db")
    assert "Tr0ub4dor&3" not in user + assistant and "0532" not in user
    assert "[REDACTED:secret]" in user and "[REDACTED:iban]" in user
    with sqlite3.connect(tmp_path / "memory.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM mem_pair_secrets").fetchone() == (0,)


async def test_an_encrypted_copy_is_kept_and_forgotten(
    db: Database, clock: ManualClock, tmp_path: Path
) -> None:
    key = Fernet.generate_key().decode()
    settings = Settings(_env_file=None, secret_copies="encrypted", secrets_key=key)
    memory = PersonalMemory(db, clock=clock, settings=settings)
    await memory.add_pair("ann", PairIn(SECRET_TURN, "ok", id="p1"))
    await memory.add_pair("ann", PairIn("I like jazz", "ok", id="p2"))
    assert memory.vault is not None
    async with db.session() as session:
        assert await memory.vault.reveal(session, "ann", "p1") == (SECRET_TURN, "ok")
        with pytest.raises(KeyError):
            await memory.vault.reveal(session, "ann", "p2")  # nothing secret: no copy
    await db.checkpoint()
    assert b"Tr0ub4dor&3" not in (tmp_path / "memory.db").read_bytes()
    await memory.forget_item("ann", "pair", "p1", checkpoint=True)
    with sqlite3.connect(tmp_path / "memory.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM mem_pair_secrets").fetchone() == (0,)


def test_encrypted_copies_need_a_valid_key() -> None:
    with pytest.raises(ConfigError, match="SECRETS_KEY"):
        SecretVault.from_settings(Settings(_env_file=None, secret_copies="encrypted"))
    with pytest.raises(ConfigError, match="Fernet"):
        SecretVault.from_settings(
            Settings(_env_file=None, secret_copies="encrypted", secrets_key="short")
        )
    assert SecretVault.from_settings(Settings(_env_file=None)) is None
