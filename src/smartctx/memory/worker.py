"""The compaction worker: compaction and retention for every owner, on a schedule.

``CompactionWorker(memory, interval=...)`` runs ``run_once`` every ``interval`` seconds (default
``Settings.compaction_interval``) in a background task started by ``start()`` in the server's
event loop; ``stop()`` cancels it and waits. A failing run is logged and retried at the next
tick; it never stops the loop. ``run_once`` is also what ``smartctx memory compact`` calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from smartctx.memory.personal import PersonalMemory

log = logging.getLogger(__name__)


class CompactionWorker:
    """Background compaction + retention. Constructing it starts nothing."""

    def __init__(self, memory: PersonalMemory, *, interval: float | None = None) -> None:
        self.memory = memory
        self.interval = interval if interval is not None else memory.settings.compaction_interval
        self._task: asyncio.Task[None] | None = None
        self.runs = 0

    async def run_once(self, *, force: bool = False) -> dict[str, Any]:
        """Compact every owner, then enforce retention; returns what was done."""
        reports = await self.memory.compact(force=force)
        retained = await self.memory.enforce_retention()
        self.runs += 1
        return {"compaction": [r.to_dict() for r in reports], "retention": retained}

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.run_once()
            except Exception:  # the worker must survive a bad run; the next tick retries
                log.exception("personal-memory compaction failed")

    def start(self) -> None:
        """Start the schedule in the running event loop (idempotent)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self) -> None:
        """Cancel the schedule and wait for it to end."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
