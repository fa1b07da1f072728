"""A2A tasks for several replicas: the task table, its versions and its event log.

The columns are those of a2a-sdk 1.3's ``TaskMixin``, ``TaskVersionMixin`` and
``TaskEventMixin`` (``a2a.server.models``) on our table names; the service maps the SDK's models
onto these tables (``smartctx.service.task_cluster``) and never lets the SDK create tables.

- ``a2a_tasks``: one row per task, as the SDK's ``DatabaseTaskStore`` keeps it. Databases from
  before this revision already have it (the SDK created it at start-up), so it is created only
  when missing.
- ``a2a_task_versions``: the compare-and-swap counter of ``VersionedDatabaseTaskStore``; every
  write to a task adds one, so two replicas never overwrite each other's state.
- ``a2a_task_events``: the append-only log of task events (serialised ``StreamResponse``),
  written in the same transaction as the task row and polled by ``DatabaseTaskEventStream``, so
  a client resubscribing through another replica receives the remaining events.

Revision ID: 0007_i10cluster
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_i10cluster"
down_revision = None
branch_labels = ("a2a_tasks",)
depends_on = None

TASKS = "a2a_tasks"
VERSIONS = "a2a_task_versions"
EVENTS = "a2a_task_events"


def upgrade() -> None:
    if not sa.inspect(op.get_bind()).has_table(TASKS):
        op.create_table(
            TASKS,
            sa.Column("id", sa.String(36), nullable=False),
            sa.Column("context_id", sa.String(36), nullable=False),
            sa.Column("kind", sa.String(16), nullable=False),
            sa.Column("owner", sa.String(255), nullable=True),
            sa.Column("last_updated", sa.DateTime(), nullable=True),
            sa.Column("status", sa.JSON(), nullable=False),
            sa.Column("artifacts", sa.JSON(), nullable=True),
            sa.Column("history", sa.JSON(), nullable=True),
            sa.Column("protocol_version", sa.String(16), nullable=True),
            sa.Column("metadata", sa.JSON(), nullable=True),
            sa.PrimaryKeyConstraint("id", name="a2a_tasks_pkey"),
        )
        op.create_index("ix_a2a_tasks_id", TASKS, ["id"])
        op.create_index("idx_a2a_tasks_owner_last_updated", TASKS, ["owner", "last_updated"])
    op.create_table(
        VERSIONS,
        sa.Column("task_id", sa.String(36), nullable=False),
        sa.Column("owner", sa.String(255), nullable=True),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("task_id", name="pk_a2a_task_versions"),
    )
    op.create_table(
        EVENTS,
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("task_id", sa.String(36), nullable=False),
        sa.Column("owner", sa.String(255), nullable=True),
        sa.Column("task_version", sa.BigInteger(), nullable=False),
        sa.Column("event_data", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_a2a_task_events"),
    )
    # The stream polls one task's events in ``seq`` order; forget and pruning go by owner.
    op.create_index("ix_a2a_task_events_task_id_seq", EVENTS, ["task_id", "seq"])
    op.create_index("ix_a2a_task_events_owner", EVENTS, ["owner"])


def downgrade() -> None:
    op.drop_table(EVENTS)
    op.drop_table(VERSIONS)
    # ``a2a_tasks`` may predate this revision (the SDK created it): it stays.
