"""The memory API's values: a :class:`Memory` as every surface shows it, the filters of search
and listing, and the checks on what a caller sends (each failure an ``InvalidInput``, HTTP 400).

A memory's JSON uses mem0's names where they fit: ``id``, ``memory`` (the text), ``metadata``,
``created_at``, ``updated_at``, ``score`` (search only); smartctx adds ``kind``, ``owner``
(mem0's ``user_id``), ``agent_id``, ``session_id`` (mem0's ``run_id``), ``version``,
``source_id`` (``mem:<id>``, the id the agent cites when it recalls the memory), ``provenance``
(the window slots it came from) and ``origin`` (how it arrived: API, conversation, import).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from smartctx.core.errors import InvalidInput

MAX_TEXT = 8000
"""Characters of one memory's text."""
MAX_METADATA = 16_000
"""Characters of one memory's metadata as JSON."""
MAX_LIMIT = 1000
"""The largest page of ``get_all``/search results."""
_SCOPE_RE = re.compile(r"^[A-Za-z0-9_.:@-]{1,128}$")
_KIND_RE = re.compile(r"^[a-z_]{1,16}$")


@dataclass(frozen=True, slots=True)
class Memory:
    """One long-term memory item with its scopes, version and origin."""

    id: str
    owner: str
    text: str
    kind: str = "fact"
    agent_id: str | None = None
    session_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: str | None = None
    updated_at: str | None = None
    version: int = 1
    provenance: tuple[str, ...] = ()
    origin: dict[str, Any] = field(default_factory=dict)
    seq: int = -1

    def to_dict(self, score: float | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "memory": self.text,
            "kind": self.kind,
            "owner": self.owner,
            "agent_id": self.agent_id,
            "session_id": self.session_id,
            "metadata": dict(self.metadata),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "version": self.version,
            "source_id": f"mem:{self.id}",
            "provenance": list(self.provenance),
            "origin": dict(self.origin),
        }
        if score is not None:
            out["score"] = round(score, 6)
        return out

    def facets(self) -> dict[str, Any]:
        """What filters look at (kept as the search index's metadata)."""
        return {
            "kind": self.kind,
            "agent_id": self.agent_id,
            "session_id": self.session_id,
            "created_at": self.created_at or "",
            "metadata": dict(self.metadata),
        }


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Which memories a search or listing considers; every given field must match.

    ``kinds``: any of these kinds; ``created_after``/``created_before``: ISO-8601 bounds on
    ``created_at`` (inclusive; a memory without a creation time fails a time bound);
    ``metadata``: each key equals the value (a list value matches any of its items).
    """

    agent_id: str | None = None
    session_id: str | None = None
    kinds: tuple[str, ...] = ()
    created_after: str | None = None
    created_before: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        kind: str | list[str] | tuple[str, ...] | None = None,
        created_after: str | None = None,
        created_before: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> MemoryFilter:
        """A checked filter (``InvalidInput`` on a malformed scope, kind or time)."""
        kinds = (kind,) if isinstance(kind, str) else tuple(kind or ())
        return cls(
            agent_id=check_scope("agent_id", agent_id),
            session_id=check_scope("session_id", session_id),
            kinds=tuple(check_kind(k) for k in kinds),
            created_after=check_time("created_after", created_after),
            created_before=check_time("created_before", created_before),
            metadata=check_metadata(metadata),
        )

    def matches(self, facets: dict[str, Any]) -> bool:
        if self.agent_id is not None and facets.get("agent_id") != self.agent_id:
            return False
        if self.session_id is not None and facets.get("session_id") != self.session_id:
            return False
        if self.kinds and facets.get("kind") not in self.kinds:
            return False
        created = str(facets.get("created_at") or "")
        if self.created_after is not None and not (created and created >= self.created_after):
            return False
        if self.created_before is not None and not (created and created <= self.created_before):
            return False
        meta = facets.get("metadata") or {}
        for key, wanted in self.metadata.items():
            value = meta.get(key)
            if isinstance(wanted, list) and not isinstance(value, list):
                if value not in wanted:
                    return False
            elif value != wanted:
                return False
        return True


@dataclass(frozen=True, slots=True)
class NewMemory:
    """A memory to store (``checked()`` returns it validated, or raises ``InvalidInput``)."""

    text: str
    kind: str = "fact"
    agent_id: str | None = None
    session_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    provenance: tuple[str, ...] = ()
    origin: dict[str, Any] = field(default_factory=lambda: {"via": "api"})
    id: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    version: int = 1
    history: tuple[dict[str, Any], ...] = ()

    def checked(self) -> NewMemory:
        return replace(
            self,
            text=check_text(self.text),
            kind=check_kind(self.kind),
            agent_id=check_scope("agent_id", self.agent_id),
            session_id=check_scope("session_id", self.session_id),
            metadata=check_metadata(self.metadata),
            provenance=tuple(str(p)[:512] for p in self.provenance),
        )


def now_iso(now: datetime | None = None) -> str:
    """A UTC time as ISO-8601 with seconds (the form every stored time uses)."""
    return (now or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="seconds")


def check_time(name: str, value: str | None) -> str | None:
    """``value`` parsed and rewritten as UTC ISO-8601 (a date alone is its midnight)."""
    if value is None or not str(value).strip():
        return None
    try:
        parsed = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    except ValueError as err:
        raise InvalidInput(f"{name} must be an ISO-8601 time, got {str(value)[:40]!r}") from err
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return now_iso(parsed)


def check_scope(name: str, value: str | None) -> str | None:
    """An agent or session id: 1-128 letters, digits or ``-_.:@`` (``None`` when empty)."""
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    if not _SCOPE_RE.match(text):
        raise InvalidInput(f"{name} {text[:40]!r} is invalid: use 1-128 letters, digits or -_.:@")
    return text


def check_kind(value: str) -> str:
    """A memory kind: 1-16 lower-case letters or ``_`` (e.g. ``fact``, ``turn``, ``note``)."""
    if not isinstance(value, str) or not _KIND_RE.match(value):
        raise InvalidInput(f"kind {str(value)[:40]!r} is invalid: use 1-16 letters a-z or _")
    return value


def check_text(value: str) -> str:
    """A memory's text: not blank, at most :data:`MAX_TEXT` characters."""
    text = value.strip() if isinstance(value, str) else ""
    if not text:
        raise InvalidInput("a memory needs a non-empty text")
    if len(text) > MAX_TEXT:
        raise InvalidInput(f"a memory's text is at most {MAX_TEXT} characters, got {len(text)}")
    return text


def check_metadata(value: dict[str, Any] | None) -> dict[str, Any]:
    """Metadata: a JSON object of at most :data:`MAX_METADATA` characters (copied)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput("metadata must be a JSON object")
    try:
        encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise InvalidInput(f"metadata must be JSON: {err}") from err
    if len(encoded) > MAX_METADATA:
        raise InvalidInput(f"metadata is at most {MAX_METADATA} characters of JSON")
    copy: dict[str, Any] = json.loads(encoded)
    return copy


def check_limit(value: int, *, default: int = 100) -> int:
    """A page size between 1 and :data:`MAX_LIMIT`."""
    limit = default if value is None else int(value)
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    return limit


__all__ = [
    "MAX_LIMIT",
    "MAX_METADATA",
    "MAX_TEXT",
    "Memory",
    "MemoryFilter",
    "NewMemory",
    "check_kind",
    "check_limit",
    "check_metadata",
    "check_scope",
    "check_text",
    "check_time",
    "now_iso",
]
