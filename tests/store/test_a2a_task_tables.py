"""The A2A task tables come from our migrations (revision ``0007_i10cluster``), on SQLite and on
PostgreSQL (a throw-away database per test; skipped when PostgreSQL does not answer).

Their columns are exactly those of a2a-sdk's models, so the SDK's stores read and write them (an
SDK upgrade that changes its models fails here first); a database whose ``a2a_tasks`` the SDK
created at start-up (before this revision) keeps its tasks; replicas migrating one fresh
PostgreSQL database at the same moment both start.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from a2a.server.models import TaskEventModel, TaskModel, TaskVersionModel, create_task_model
from sqlalchemy.orm import DeclarativeBase

from smartctx.bench.serve_procs import postgres_answers, throwaway_database
from smartctx.store.db import Database

SDK_MODELS = {"a2a_tasks": TaskModel, "a2a_task_events": TaskEventModel}
SDK_MODELS["a2a_task_versions"] = TaskVersionModel


def postgres_admin() -> str:
    url = os.environ.get(
        "SMARTCTX_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
    )
    return url.rsplit("/", 1)[0] + "/postgres"


@pytest.fixture(params=["sqlite", "postgresql"])
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A fresh, empty database of each kind."""
    if request.param == "postgresql" and not await postgres_answers(postgres_admin()):
        pytest.skip("PostgreSQL does not answer")
    async with throwaway_database(request.param, tmp_path, postgres_admin()) as fresh:
        yield fresh


def _columns(connection: sa.Connection, table: str) -> dict[str, tuple[bool, bool]]:
    """column -> (nullable, in the primary key)"""
    inspector = sa.inspect(connection)
    primary = set(inspector.get_pk_constraint(table)["constrained_columns"])
    return {
        c["name"]: (bool(c["nullable"]), c["name"] in primary) for c in inspector.get_columns(table)
    }


async def test_migrated_task_tables_have_the_sdk_columns(url: str) -> None:
    db = Database(url)
    try:
        await db.migrate()
        async with db.engine.connect() as conn:
            for table, model in SDK_MODELS.items():
                found = await conn.run_sync(_columns, table)
                expected = {
                    c.name: (bool(c.nullable), bool(c.primary_key))
                    for c in model.__table__.columns  # type: ignore[attr-defined]
                }
                assert found == expected, table
    finally:
        await db.close()


async def test_a_task_table_the_sdk_created_keeps_its_tasks(url: str) -> None:
    """Before revision 0007 the SDK created ``a2a_tasks`` itself at start-up."""

    class _OldBase(DeclarativeBase):
        pass

    old: Any = create_task_model("a2a_tasks", _OldBase)
    db = Database(url)
    try:
        async with db.engine.begin() as conn:
            await conn.run_sync(_OldBase.metadata.create_all)
            await conn.execute(
                sa.insert(old.__table__).values(
                    id="t-old", context_id="c", kind="task", owner="o", status={"state": "x"}
                )
            )
        await db.migrate()
        async with db.engine.connect() as conn:
            ids = (await conn.execute(sa.text("SELECT id FROM a2a_tasks"))).scalars().all()
            events = await conn.execute(sa.text("SELECT count(*) FROM a2a_task_events"))
        assert ids == ["t-old"] and events.scalar() == 0
    finally:
        await db.close()


async def test_replicas_migrating_at_once_both_start(url: str) -> None:
    replicas = [Database(url) for _ in range(3)]
    try:
        # without the migration lock their DDL blocks each other: a guard, not a timing claim
        await asyncio.wait_for(asyncio.gather(*(db.migrate() for db in replicas)), 120)
        async with replicas[0].engine.connect() as conn:
            heads = await conn.execute(sa.text("SELECT version_num FROM alembic_version"))
            assert "0007_i10cluster" in set(heads.scalars())
    finally:
        for db in replicas:
            await db.close()
