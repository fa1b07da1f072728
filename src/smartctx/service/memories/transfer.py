"""Export and import of memories as JSON Lines, with provenance.

One line per memory (``SCHEMA`` names the format)::

    {"schema": "smartctx.memory/v1", "id": ..., "memory": ..., "kind": ..., "owner": ...,
     "agent_id": ..., "session_id": ..., "metadata": {...}, "created_at": ..., "updated_at": ...,
     "version": 2, "source_id": "mem:...", "provenance": [...], "origin": {...},
     "history": [{"event": "ADD", ...}, ...], "exported_at": ...}

Import keeps each memory's id (so importing a file twice adds nothing the second time), text,
scopes, metadata, times, provenance and history, and records where it came from in ``origin``:
``{"via": "import", "original_owner", "original_id", "exported_at", "imported_at",
"previous_origin"}``, plus an ``IMPORT`` history entry. The whole file is checked before
anything is written (a bad line rejects the import with its line number, nothing stored).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

from smartctx.core.errors import InvalidInput
from smartctx.service.memories.records import (
    Memory,
    MemoryFilter,
    NewMemory,
    check_scope,
    check_time,
    now_iso,
)
from smartctx.service.memories.service import MemoryService

SCHEMA = "smartctx.memory/v1"
MAX_IMPORT_LINES = 10_000
_HISTORY_KEYS = (
    "event",
    "old_memory",
    "new_memory",
    "old_metadata",
    "new_metadata",
    "created_at",
)


def export_line(memory: Memory, history: list[dict[str, Any]], exported_at: str) -> str:
    """One JSON line for ``memory`` (no trailing newline)."""
    record = {"schema": SCHEMA, **memory.to_dict(), "exported_at": exported_at}
    record["history"] = [{k: h.get(k) for k in _HISTORY_KEYS} for h in history]
    return json.dumps(record, ensure_ascii=False, sort_keys=False)


def _record(number: int, line: str, imported_at: str) -> NewMemory | None:
    if not line.strip():
        return None
    try:
        data = json.loads(line)
    except json.JSONDecodeError as err:
        raise InvalidInput(f"line {number}: not JSON ({err.msg})") from err
    if not isinstance(data, dict):
        raise InvalidInput(f"line {number}: expected a JSON object")
    if data.get("schema", SCHEMA) != SCHEMA:
        raise InvalidInput(f"line {number}: unknown schema {str(data.get('schema'))[:40]!r}")
    text = data.get("memory", data.get("text"))
    if not isinstance(text, str):
        raise InvalidInput(f"line {number}: 'memory' must be a string")
    history = data.get("history") or []
    provenance = data.get("provenance") or []
    if not isinstance(history, list) or not all(isinstance(h, dict) for h in history):
        raise InvalidInput(f"line {number}: 'history' must be a list of objects")
    if not isinstance(provenance, list):
        raise InvalidInput(f"line {number}: 'provenance' must be a list")
    original_id = data.get("id")
    try:
        memory_id = check_scope("id", str(original_id)[:64]) if original_id else None
        version = int(data.get("version") or 1)
        record = NewMemory(
            text=text,
            kind=str(data.get("kind") or "fact"),
            agent_id=data.get("agent_id"),
            session_id=data.get("session_id"),
            metadata=data.get("metadata") or {},
            provenance=tuple(str(p) for p in provenance),
            origin={
                "via": "import",
                "original_owner": data.get("owner"),
                "original_id": original_id,
                "exported_at": data.get("exported_at"),
                "imported_at": imported_at,
                "previous_origin": data.get("origin") or {},
            },
            id=memory_id,
            created_at=check_time("created_at", data.get("created_at")),
            updated_at=check_time("updated_at", data.get("updated_at")),
            version=max(1, version),
            history=tuple({k: h.get(k) for k in _HISTORY_KEYS} for h in history),
        ).checked()
    except (InvalidInput, TypeError, ValueError) as err:
        message = err.message if isinstance(err, InvalidInput) else str(err)
        raise InvalidInput(f"line {number}: {message}") from err
    return record


def parse_lines(lines: Iterable[str], imported_at: str) -> list[NewMemory]:
    """Every memory of a JSON Lines export, checked; ``InvalidInput`` names the first bad line."""
    out: list[NewMemory] = []
    for number, line in enumerate(lines, start=1):
        if number > MAX_IMPORT_LINES:
            raise InvalidInput(f"an import holds at most {MAX_IMPORT_LINES} lines")
        record = _record(number, line, imported_at)
        if record is not None:
            out.append(record)
    if not out:
        raise InvalidInput("the import holds no memory")
    return out


async def export_jsonl(
    service: MemoryService, owner: str, flt: MemoryFilter | None = None
) -> AsyncIterator[str]:
    """The owner's memories as JSON lines (each ending in a newline), a page at a time."""
    exported_at = now_iso(service.clock.now())
    async for memory, history in service.export(owner, flt):
        yield export_line(memory, history, exported_at) + "\n"


async def import_jsonl(service: MemoryService, owner: str, lines: Iterable[str]) -> dict[str, Any]:
    """Import an export into ``owner``'s memories, atomically; returns the counts and the ids
    (``skipped``: ids the owner already has)."""
    records = parse_lines(lines, now_iso(service.clock.now()))
    results = await service.add(owner, records)
    added = [m.id for m, event in results if event == "ADD"]
    return {
        "imported": len(added),
        "skipped": len(results) - len(added),
        "ids": [m.id for m, _ in results],
    }


__all__ = [
    "MAX_IMPORT_LINES",
    "SCHEMA",
    "export_jsonl",
    "export_line",
    "import_jsonl",
    "parse_lines",
]
