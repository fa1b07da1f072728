"""Storing turns: the pair tier and the evidence the extractor finds in it.

A pair is identified by the id the device (or the service) gives it, so storing the same turn
twice stores it once (``store_pairs`` reports it as a duplicate). The pair keeps the words as
said, except that detected sensitive values are redacted (``privacy.redact``; with a
:class:`~smartctx.memory.vault.SecretVault` the originals are kept encrypted beside it); the
extractor only ever sees the redacted text, and a pair with a sensitive value is flagged.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from smartctx.core.errors import InvalidInput
from smartctx.memory import promotion
from smartctx.memory.extractor import ACCEPTANCE, CONTRADICTION, Observation, extract
from smartctx.memory.privacy import is_sensitive, redact, redact_echoes
from smartctx.memory.repository import day_of
from smartctx.memory.tables import PairRow, ProfileItemRow
from smartctx.memory.vault import SecretVault

MAX_TEXT = 8000


@dataclass(frozen=True, slots=True)
class PairIn:
    """One turn to store. ``created_at`` defaults to the memory's clock."""

    user_text: str
    assistant_text: str = ""
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    session_id: str = "default"
    route_family: str = ""
    workflow_id: str = ""
    created_at: datetime | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.user_text, str) or not self.user_text.strip():
            raise InvalidInput("a pair needs a non-empty user_text")
        if len(self.user_text) > MAX_TEXT or len(self.assistant_text) > MAX_TEXT:
            raise InvalidInput(f"a pair's texts are limited to {MAX_TEXT} characters")
        if not self.id or len(self.id) > 64:
            raise InvalidInput("a pair id is 1-64 characters", id=self.id[:80])

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PairIn:
        """From the wire: accepts ``user_text``/``user`` and ``assistant_text``/``assistant``."""
        if not isinstance(data, Mapping):
            raise InvalidInput("a pair must be a JSON object")
        created = data.get("created_at")
        try:
            when = datetime.fromisoformat(created) if isinstance(created, str) else None
        except ValueError as err:
            raise InvalidInput(f"created_at {created!r} is not ISO-8601") from err
        if when is not None and when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return cls(
            user_text=str(data.get("user_text", data.get("user", "")) or ""),
            assistant_text=str(data.get("assistant_text", data.get("assistant", "")) or ""),
            id=str(data.get("id") or uuid.uuid4().hex),
            session_id=str(data.get("session_id") or "default"),
            route_family=str(data.get("route_family") or ""),
            workflow_id=str(data.get("workflow_id") or ""),
            created_at=when,
        )


@dataclass(slots=True)
class StoreResult:
    """Which pairs were stored, which were already there, and the profile items touched."""

    stored: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    items: list[ProfileItemRow] = field(default_factory=list)
    rows: list[PairRow] = field(default_factory=list)
    """The stored pairs' rows, as written (the session's identity map keeps only weak
    references: without these a later ``session.get`` reads them back)."""


async def existing_ids(session: AsyncSession, owner: str, ids: Sequence[str]) -> set[str]:
    """The subset of ``ids`` that ``owner`` already has."""
    if not ids:
        return set()
    rows = await session.scalars(_EXISTING, {"owner": owner, "ids": list(ids)})
    return set(rows)


_EXISTING = select(PairRow.id).where(
    PairRow.owner == bindparam("owner"), PairRow.id.in_(bindparam("ids", expanding=True))
)
"""Which of some pair ids an owner has (built once: every served turn asks)."""


async def store_pairs(
    session: AsyncSession,
    owner: str,
    pairs: Sequence[PairIn],
    *,
    now: datetime,
    seq: int,
    vault: SecretVault | None = None,
    known: set[str] | None = None,
) -> StoreResult:
    """Insert the pairs ``owner`` does not have yet and record their profile evidence.

    ``known``: the pair ids ``owner`` already has, when the caller read them in this session
    (so they are not read again); by default they are read here."""
    result = StoreResult()
    if known is None:
        known = await existing_ids(session, owner, [p.id for p in pairs])
    known = set(known)
    for pair in pairs:
        if pair.id in known:
            result.duplicates.append(pair.id)
            continue
        known.add(pair.id)
        when = pair.created_at or now
        day = day_of(when)  # the day where the turn happened (its own offset)...
        when = when.astimezone(UTC)  # ...stored in UTC, so retention compares like with like
        user_text = redact(pair.user_text)
        assistant_text = redact_echoes(pair.assistant_text, pair.user_text)
        sensitive = user_text != pair.user_text or assistant_text != pair.assistant_text
        row = PairRow(
            owner=owner,
            id=pair.id,
            session_id=pair.session_id,
            day=day,
            user_text=user_text,
            assistant_text=assistant_text,
            route_family=pair.route_family,
            workflow_id=pair.workflow_id,
            sensitive=sensitive or is_sensitive(user_text) or is_sensitive(assistant_text),
            summary_id=None,
            created_at=when,
            seq=seq,
        )
        session.add(row)
        result.rows.append(row)
        await session.flush()
        if vault is not None and sensitive:
            await vault.keep(session, owner, pair.id, pair.user_text, pair.assistant_text)
        observations = extract(user_text)
        items = await promotion.record(
            session,
            owner,
            observations,
            day=day,
            now=now,
            seq=seq,
            pair_id=pair.id,
            session_id=pair.session_id,
        )
        result.stored.append(pair.id)
        result.items += [i for i in items if i not in result.items]
    return result


async def respond_to_suggestion(
    session: AsyncSession,
    owner: str,
    suggestion: str,
    accepted: bool,
    *,
    now: datetime,
    seq: int,
    key: str | None = None,
    value: str | None = None,
) -> list[ProfileItemRow]:
    """Record the user's answer to a proactive suggestion ("안방 청정을 시작할까요?").

    The suggested (key, value) is given, or extracted from the suggestion's text. Acceptance is
    explicit evidence (it can confirm an item); a refusal counts as a contradiction.
    """
    kind = ACCEPTANCE if accepted else CONTRADICTION
    if key is not None and value is not None:
        observations = [Observation(key, value, kind)]
    else:
        found = [o for o in extract(redact(suggestion)) if o.kind != CONTRADICTION]
        observations = [type(o)(o.key, o.value, kind) for o in found]
    if not observations:
        raise InvalidInput(
            "no profile item found in the suggestion: pass key and value explicitly",
            suggestion=suggestion[:200],
        )
    return await promotion.record(session, owner, observations, day=day_of(now), now=now, seq=seq)
