"""Fixtures of the personal-memory tests: a fresh SQLite file database per test, a manual clock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from smartctx.core.clock import ManualClock
from smartctx.core.settings import Settings
from smartctx.core.tokens import WhitespaceCounter
from smartctx.memory import PersonalMemory
from smartctx.store import Database

DAY1 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)  # a Monday


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(DAY1)


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'memory.db'}")
    await database.migrate()
    yield database
    await database.close()


@pytest.fixture
def memory(db: Database, clock: ManualClock) -> PersonalMemory:
    return PersonalMemory(db, clock=clock, settings=Settings(_env_file=None))


@pytest.fixture
def counter() -> WhitespaceCounter:
    return WhitespaceCounter()
