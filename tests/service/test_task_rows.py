"""``task_row`` gives the SDK's own task-row values (``DatabaseTaskStore._to_orm``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from a2a.server.tasks import DatabaseTaskStore
from a2a.types.a2a_pb2 import Artifact, Message, Part, Role, Task, TaskState, TaskStatus
from google.protobuf.struct_pb2 import Struct
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import create_async_engine

from smartctx.service.task_rows import struct_dict, task_row

_COLUMNS = (
    "id",
    "context_id",
    "kind",
    "owner",
    "last_updated",
    "status",
    "artifacts",
    "history",
    "task_metadata",
    "protocol_version",
)

_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=24,
)
_metadata = st.dictionaries(st.text(max_size=8), _json, max_size=5)


@pytest.fixture(scope="module")
def sdk_store() -> Iterator[DatabaseTaskStore]:
    yield DatabaseTaskStore(create_async_engine("sqlite+aiosqlite://"), create_table=False)


def _sdk_row(store: DatabaseTaskStore, task: Task, owner: str) -> dict[str, Any]:
    model = store._to_orm(task, owner)
    return {key: getattr(model, key) for key in _COLUMNS}


def _task(meta: dict[str, Any], *, with_status_message: bool, with_task_metadata: bool) -> Task:
    task = Task(id="t-1", context_id="c-1")
    task.status.CopyFrom(TaskStatus(state=TaskState.TASK_STATE_COMPLETED))
    task.status.timestamp.FromSeconds(1_700_000_000)
    user = Message(message_id="m-1", role=Role.ROLE_USER, parts=[Part(text="Where is the VPN?")])
    user.metadata.update(meta)
    task.history.append(user)
    task.history.append(Message(message_id="m-2", role=Role.ROLE_AGENT, parts=[Part(text="ok")]))
    reply = Artifact(artifact_id="reply-t-1", name="reply", parts=[Part(text="GlobalProtect")])
    reply.metadata.update({"smartctx": {"events": [meta, {"tokens": 5}], "promptTokens": 812}})
    task.artifacts.append(reply)
    if with_status_message:
        status_message = Message(message_id="m-3", role=Role.ROLE_AGENT, parts=[Part(text="done")])
        status_message.metadata.update(meta)
        task.status.message.CopyFrom(status_message)
    if with_task_metadata:
        task.metadata.update(meta)
    return task


@settings(max_examples=60, deadline=None)
@given(meta=_metadata, with_status_message=st.booleans(), with_task_metadata=st.booleans())
def test_the_row_is_the_sdks_row(
    sdk_store: DatabaseTaskStore,
    meta: dict[str, Any],
    with_status_message: bool,
    with_task_metadata: bool,
) -> None:
    task = _task(
        meta, with_status_message=with_status_message, with_task_metadata=with_task_metadata
    )
    mine, theirs = task_row(task, "alice"), _sdk_row(sdk_store, task, "alice")
    assert mine == theirs
    assert _same_types(mine, theirs)


def _same_types(a: Any, b: Any) -> bool:
    """Equal values of the same types all the way down (1 == 1.0 == True in Python)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_types(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_types(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def test_a_task_without_metadata_or_timestamp(sdk_store: DatabaseTaskStore) -> None:
    task = Task(id="t-2", context_id="c-2")
    task.status.state = TaskState.TASK_STATE_WORKING
    assert task_row(task, "bob") == _sdk_row(sdk_store, task, "bob")
    assert task_row(task, "bob")["last_updated"] is None


def test_numbers_are_floats_and_nan_raises_as_in_the_sdk() -> None:
    struct = Struct()
    struct.update({"n": 3, "nested": {"xs": [1, None, True, "a"]}})
    out = struct_dict(struct)
    assert out == {"n": 3.0, "nested": {"xs": [1.0, None, True, "a"]}}
    assert type(out["n"]) is float and out["nested"]["xs"][2] is True
    struct.update({"bad": float("nan")})
    with pytest.raises(ValueError):
        struct_dict(struct)
