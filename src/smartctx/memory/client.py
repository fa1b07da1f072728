"""A Python client of the personal-memory HTTP API, and a device-side sync helper.

``MemoryClient(base_url, owner)`` calls ``/memory/owners/{owner}/...`` with httpx (async); an
error answer is raised as the matching ``SmartCtxError`` (``Conflict`` keeps the server's
current cursor and version in ``detail``). ``DeviceSync`` is what an on-device cache runs: it
keeps the cursor and version, applies the server's changes to a local cache, and on a stale
version catches up in one call and retries once. Pass ``transport=httpx.ASGITransport(app)``
to talk to an in-process app, and ``api_key`` to a server that requires credentials.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from smartctx.core.errors import (
    Conflict,
    InvalidInput,
    NotFound,
    SmartCtxError,
    UpstreamError,
    UserError,
)
from smartctx.memory.pairs import PairIn

_ERRORS: dict[str, type[SmartCtxError]] = {
    "conflict": Conflict,
    "not_found": NotFound,
    "invalid_input": InvalidInput,
    "user_error": UserError,
}


def _pair_json(pair: PairIn) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": pair.id,
        "user_text": pair.user_text,
        "assistant_text": pair.assistant_text,
        "session_id": pair.session_id,
        "route_family": pair.route_family,
        "workflow_id": pair.workflow_id,
    }
    if pair.created_at is not None:
        out["created_at"] = pair.created_at.isoformat()
    return out


class MemoryClient:
    """The personal-memory API of one owner. Use as ``async with MemoryClient(...) as c``."""

    def __init__(
        self,
        base_url: str,
        owner: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
        api_key: str | None = None,
    ) -> None:
        self.owner = owner
        headers = {"X-Smartctx-Owner": owner}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"), transport=transport, timeout=timeout, headers=headers
        )

    async def __aenter__(self) -> MemoryClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = await self._http.request(
                method, f"/memory/owners/{self.owner}{path}", **kwargs
            )
        except httpx.HTTPError as err:
            raise UpstreamError(f"memory API unreachable: {err}") from err
        data = response.json() if response.content else None
        if response.is_success:
            return data
        if isinstance(data, dict) and "error" in data:
            klass = _ERRORS.get(str(data["error"]), SmartCtxError)
            error = klass(str(data.get("message", "")))
            error.detail = dict(data.get("detail") or {})
            raise error
        raise UpstreamError(
            f"memory API answered {response.status_code}", status=response.status_code
        )

    async def sync(
        self, *, cursor: str | None = None, version: str | None = None, pairs: Sequence[PairIn] = ()
    ) -> dict[str, Any]:
        """One sync call: the server's changes since ``cursor``; ``Conflict`` when stale."""
        body = {"cursor": cursor, "version": version, "pairs": [_pair_json(p) for p in pairs]}
        result: dict[str, Any] = await self._call("POST", "/sync", json=body)
        return result

    async def add_pair(self, pair: PairIn) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("POST", "/pairs", json=_pair_json(pair))
        return result

    async def delete_pair(self, pair_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("DELETE", f"/pairs/{pair_id}")
        return result

    async def profile(self, status: str | None = None) -> list[dict[str, Any]]:
        params = {"status": status} if status else None
        result: dict[str, Any] = await self._call("GET", "/profile", params=params)
        return list(result["items"])

    async def accept(self, item_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("POST", f"/profile/{item_id}/accept")
        return result

    async def mark_wrong(self, item_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("POST", f"/profile/{item_id}/wrong")
        return result

    async def compact(self, *, force: bool = False) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("POST", "/compact", params={"force": force})
        return result

    async def snapshot(self) -> dict[str, Any]:
        """The owner's memory in ``a2a-memory-context-v1`` form."""
        result: dict[str, Any] = await self._call("GET", "/snapshot")
        return result

    async def forget(self) -> dict[str, Any]:
        """Forget this owner everywhere."""
        result: dict[str, Any] = await self._call("DELETE", "")
        return result

    async def forget_item(self, kind: str, item_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("DELETE", f"/items/{kind}/{item_id}")
        return result


class DeviceSync:
    """The device side of sync: a local cache kept current with one call per sync.

    ``cache`` maps ``"pair"``/``"summary"``/``"profile"`` to ``{id: row}``. ``push(pairs)``
    sends pending pairs based on the known version; on ``Conflict`` it catches up from the
    cursor and retries once with the version it received.
    """

    def __init__(self, client: MemoryClient, *, cursor: str | None = None) -> None:
        self.client = client
        self.cursor = cursor
        self.version: str | None = None
        self.cache: dict[str, dict[str, dict[str, Any]]] = {
            "pair": {},
            "summary": {},
            "profile": {},
        }

    def _apply(self, answer: dict[str, Any]) -> None:
        changes = answer["changes"]
        for pair in changes["pairs"]:
            self.cache["pair"][pair["id"]] = pair
        for summary in changes["summaries"]:
            self.cache["summary"][summary["id"]] = summary
        for item in changes["profile_items"]:
            self.cache["profile"][item["id"]] = item
        for gone in changes["deleted"]:
            self.cache.get(gone["kind"], {}).pop(gone["id"], None)
        self.cursor, self.version = answer["cursor"], answer["version"]

    async def pull(self) -> dict[str, Any]:
        """Catch up: every change since the cursor, in one call."""
        answer = await self.client.sync(cursor=self.cursor)
        self._apply(answer)
        return answer

    async def push(self, pairs: Sequence[PairIn]) -> dict[str, Any]:
        """Write ``pairs`` (idempotent by id) and apply the changes; one retry on conflict."""
        try:
            answer = await self.client.sync(cursor=self.cursor, version=self.version, pairs=pairs)
        except Conflict:
            await self.pull()
            answer = await self.client.sync(cursor=self.cursor, version=self.version, pairs=pairs)
        self._apply(answer)
        return answer


__all__ = ["DeviceSync", "MemoryClient"]
