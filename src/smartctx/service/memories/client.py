"""``MemoryClient``: the memory API from Python, with mem0's method names.

    async with MemoryClient("http://127.0.0.1:8000", owner="alice") as memory:
        await memory.add("I prefer aisle seats.", agent_id="travel")
        hits = await memory.search("seat preference", limit=5)
        await memory.update(hits[0]["id"], "I prefer window seats.")
        print(await memory.history(hits[0]["id"]))

Every call acts as ``owner`` (sent as the request's owner; the server decides who that is).
It is a :class:`~smartctx.service.client.SmartctxClient` with the memory API added.
Results are the JSON of the HTTP API (see :mod:`smartctx.service.memories.routes`); errors are
the server's ``SmartCtxError`` subclasses (``NotFound``, ``InvalidInput``, ``Forbidden``...).
Besides memories it reaches the knowledge base (``kb_search``, ``kb_ingest``) and personal
memory (``profile``, ``pairs``, ``forget_owner``, ``forget_item``). The constructor does no I/O.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from smartctx.core.errors import InvalidInput
from smartctx.service.client import SmartctxClient, _error_for
from smartctx.service.owner import OWNER_HEADER


def _clean(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


class MemoryClient(SmartctxClient):
    """The memory API of one smartctx server, as one owner (a :class:`SmartctxClient`, so A2A
    and the context routes are there too)."""

    async def __aenter__(self) -> MemoryClient:
        return self

    # -- memories (mem0 names) ----------------------------------------------------------------

    async def add(
        self,
        messages: str | Sequence[Mapping[str, str]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        kind: str | None = None,
        infer: bool = True,
    ) -> list[dict[str, Any]]:
        """Remember a text or chat messages; each result carries ``event`` (ADD or NONE)."""
        body = _clean(
            {
                "messages": messages if isinstance(messages, str) else [dict(m) for m in messages],
                "user_id": user_id,
                "agent_id": agent_id,
                "session_id": run_id,
                "metadata": metadata,
                "kind": kind,
                "infer": infer,
            }
        )
        result = await self._json("POST", "/memories", json=body)
        return list(result["results"])

    async def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: dict[str, Any] | None = None,
        kind: str | list[str] | None = None,
        created_after: str | None = None,
        created_before: str | None = None,
        limit: int = 10,
    ) -> list[dict[str, Any]]:
        """The relevant memories, best first, with ``score``, ``similarity``, ``lexical`` and
        ``source_id``/``provenance``; ``filters`` match metadata keys."""
        body = _clean(
            {
                "query": query,
                "user_id": user_id,
                "agent_id": agent_id,
                "session_id": run_id,
                "filters": filters,
                "kind": kind,
                "created_after": created_after,
                "created_before": created_before,
                "limit": limit,
            }
        )
        result = await self._json("POST", "/memories/search", json=body)
        return list(result["results"])

    async def get(self, memory_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self._json("GET", f"/memories/{quote(memory_id)}")
        return result

    async def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        kind: str | None = None,
        limit: int = 100,
        cursor: int = 0,
    ) -> dict[str, Any]:
        """One page: ``{"results": [...], "next_cursor": int | None}``."""
        params = _clean(
            {
                "user_id": user_id,
                "agent_id": agent_id,
                "session_id": run_id,
                "kind": kind,
                "limit": limit,
                "cursor": cursor,
            }
        )
        result: dict[str, Any] = await self._json("GET", "/memories", params=params)
        return result

    async def update(
        self, memory_id: str, data: str | None = None, *, metadata: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """New text (mem0's ``data``) and/or metadata; the old values stay in the history."""
        body = _clean({"text": data, "metadata": metadata})
        result: dict[str, Any] = await self._json("PUT", f"/memories/{quote(memory_id)}", json=body)
        return result

    async def delete(self, memory_id: str, *, forget: bool = False) -> dict[str, Any]:
        """Delete one memory; ``forget`` erases its history too."""
        params = {"forget": "true"} if forget else None
        result = await self._json("DELETE", f"/memories/{quote(memory_id)}", params=params)
        return dict(result["deleted"])

    async def delete_all(
        self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> int:
        """Delete every memory of the owner in the given scope; returns how many."""
        params = _clean(
            {"user_id": user_id, "agent_id": agent_id, "session_id": run_id, "confirm": "true"}
        )
        result = await self._json("DELETE", "/memories", params=params)
        return int(result["deleted"])

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        result = await self._json("GET", f"/memories/{quote(memory_id)}/history")
        return list(result["results"])

    async def export(self) -> AsyncIterator[str]:
        """The owner's memories as JSON lines (with history and provenance)."""
        async with self._http.stream("GET", "/memories/export") as response:
            if response.status_code >= 400:
                await response.aread()
                raise _error_for(response)
            async for line in response.aiter_lines():
                if line.strip():
                    yield line

    async def import_(self, lines: Iterable[str]) -> dict[str, Any]:
        """Import JSON lines (an export); returns ``imported``, ``skipped`` and ``ids``."""
        body = "\n".join(line.rstrip("\n") for line in lines).encode()
        headers = {"Content-Type": "application/x-ndjson"}
        result: dict[str, Any] = await self._json(
            "POST", "/memories/import", content=body, headers=headers
        )
        return result

    # -- knowledge base and personal memory ----------------------------------------------------

    async def kb_search(self, query: str, k: int = 3) -> list[dict[str, Any]]:
        result = await self._json("GET", "/kb/search", params={"query": query, "k": k})
        return list(result["results"])

    async def kb_ingest(self, name: str, text: str) -> dict[str, Any]:
        body = {"name": name, "text": text}
        result: dict[str, Any] = await self._json("POST", "/kb/documents", json=body)
        return result

    async def _owner_path(self, suffix: str = "") -> str:
        if self.owner is None:  # a key's own owner: the server names it on any answer
            answer = await self._http.get("/memory/contexts", params={"limit": 1})
            self.owner = answer.headers.get(OWNER_HEADER) or None
            if self.owner is None:
                raise InvalidInput(f"{self.url} did not say which owner this key belongs to")
        return f"/memory/owners/{quote(self.owner)}{suffix}"

    async def profile(self, status: str | None = None) -> list[dict[str, Any]]:
        params = _clean({"status": status})
        result = await self._json("GET", await self._owner_path("/profile"), params=params)
        return list(result["items"])

    async def pairs(self, session_id: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        params = _clean({"session_id": session_id, "limit": limit})
        result = await self._json("GET", await self._owner_path("/pairs"), params=params)
        return list(result["pairs"])

    async def forget_owner(self) -> dict[str, Any]:
        """Delete every copy of the owner's data in every store."""
        result: dict[str, Any] = await self._json("DELETE", await self._owner_path())
        return result

    async def forget_item(self, kind: str, item_id: str) -> dict[str, Any]:
        """Delete one pair/profile item/summary and every copy of it."""
        path = await self._owner_path(f"/items/{quote(kind)}/{quote(item_id)}")
        result: dict[str, Any] = await self._json("DELETE", path)
        return result


__all__ = ["MemoryClient"]
