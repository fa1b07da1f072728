"""The reply artifact of an A2A turn, sent as one artifact or as streamed chunks.

A2A lets an artifact arrive in pieces: the first ``TaskArtifactUpdateEvent`` creates it, later
ones with ``append`` add parts, and the one with ``last_chunk`` closes it. The a2a-sdk's task
manager appends the parts to the stored task, so the artifact's text is the chunks concatenated.
"""

from __future__ import annotations

import time
from typing import Any

from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Artifact, Part

REPLY = "reply"
"""The name of the reply artifact."""


class ArtifactStream:
    """The reply artifact sent chunk by chunk (A2A ``append`` / ``last_chunk``).

    Chunks arriving within ``flush_seconds`` of the last update are sent together, because the
    a2a-sdk saves the task on every artifact event; ``finish`` sends the rest with the metadata
    and ``last_chunk``. Without any chunk, ``finish`` sends the whole artifact at once. If the
    turn fails after chunks were sent, the task keeps the partial artifact and ends ``failed``.
    """

    def __init__(self, updater: TaskUpdater, flush_seconds: float) -> None:
        self.updater = updater
        self.flush_seconds = flush_seconds
        self.artifact_id: str | None = None
        self.pending: list[str] = []
        self.last_flush = 0.0

    async def on_token(self, chunk: str) -> None:
        self.pending.append(chunk)
        if time.monotonic() - self.last_flush >= self.flush_seconds:
            await self._send(last=False, metadata=None)

    async def _send(self, *, last: bool, metadata: dict[str, Any] | None) -> None:
        text = "".join(self.pending)
        self.pending.clear()
        self.last_flush = time.monotonic()
        first = self.artifact_id is None
        if first:
            self.artifact_id = self.reply_id()
        await self.updater.add_artifact(
            [Part(text=text)],
            artifact_id=self.artifact_id,
            name=REPLY,
            metadata=metadata,
            append=not first,
            last_chunk=last,
        )

    def reply_id(self) -> str:
        return f"reply-{self.updater.task_id}"

    def whole(self, reply: str, metadata: dict[str, Any]) -> Artifact:
        """The reply as one artifact, as ``finish`` would leave it on a task no chunk reached."""
        artifact = Artifact(artifact_id=self.reply_id(), name=REPLY, parts=[Part(text=reply)])
        artifact.metadata.update(metadata)
        return artifact

    async def finish(self, reply: str, metadata: dict[str, Any]) -> None:
        if self.artifact_id is None:
            self.pending = [reply]
        await self._send(last=True, metadata=metadata)
