"""New task ids that no store holds yet, so reading them costs no query.

The a2a-sdk reads a task from the store three times before the first save of a new one (when its
``ActiveTask`` starts, when the producer picks the request up, and before saving the initial
task), and each read of a task that does not exist yet is a query: three of a turn's statements.
A task id the server generates for a new message (a UUID4, through the SDK's own
``IDGenerator`` hook of its ``SimpleRequestContextBuilder``) cannot be in any store, on any
replica, until this process saves it: nobody else has seen it. :class:`FreshTaskIds` remembers
such ids; the task stores (:mod:`smartctx.service.task_cluster`) answer a read of one as missing
without a query, and forget the id as soon as a save of it *starts*, so from then on every read
goes to the database as before. A message that names an existing task (``taskId``) never passes
through the generator. The set is bounded (ids of turns that failed before their first save are
dropped oldest first).

A request handler may take a new message's task id before the SDK asks for it
(:meth:`FreshTaskIds.planned`): it claims the message's delivery under that id in the same
statement that finds whether the message was delivered before
(:meth:`smartctx.service.delivery.DeliveryLog.claim_new`), and the generator hands the SDK that
id for the task.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from a2a.server.id_generator import IDGenerator, IDGeneratorContext

MAX_FRESH = 4096
"""Fresh ids remembered at most (far above the turns a process runs at once)."""
_PLANNED: ContextVar[str | None] = ContextVar("smartctx_planned_task_id", default=None)


class FreshTaskIds(IDGenerator):
    """The SDK's task id generator (UUID4, as its default) that remembers what it generated."""

    def __init__(self, max_ids: int = MAX_FRESH) -> None:
        self.max_ids = max_ids
        self._ids: OrderedDict[str, None] = OrderedDict()

    def generate(self, context: IDGeneratorContext) -> str:
        planned = _PLANNED.get()
        if planned is not None:
            _PLANNED.set(None)  # one task: a second generation makes a new id
            return planned
        return self._new()

    def _new(self) -> str:
        task_id = str(uuid.uuid4())
        self._ids[task_id] = None
        while len(self._ids) > self.max_ids:
            self._ids.popitem(last=False)
        return task_id

    @contextmanager
    def planned(self) -> Iterator[str]:
        """A fresh id, which the block's next :meth:`generate` returns (tasks the block starts
        share it: the request's own task asks first)."""
        task_id = self._new()
        token = _PLANNED.set(task_id)
        try:
            yield task_id
        finally:
            _PLANNED.reset(token)

    def unsaved(self, task_id: str) -> bool:
        """True while no save of ``task_id`` has started: no store can hold it."""
        return task_id in self._ids

    def saving(self, task_id: str) -> None:
        """A save of ``task_id`` starts: reads of it go to the store from now on."""
        self._ids.pop(task_id, None)
