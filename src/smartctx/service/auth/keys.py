"""API keys: created once, shown once, stored only as a SHA-256 digest, revocable.

A key reads ``sctx_<key id>_<secret>``: the key id (12 hex characters) finds the row, the secret
(32 random bytes, URL-safe base64) proves possession. The table ``api_keys`` (Alembic branch
``auth``) keeps the key id, owner, admin flag, a name, the SHA-256 of the whole key and the
creation and revocation times, never the key: a stolen database file yields no usable key. A key
has 256 bits of entropy, so one unsalted SHA-256 is enough (a slow password hash protects
guessable secrets, which these are not); digests are compared in constant time.

``verify`` costs one primary-key lookup; revocation takes effect on the next request, in every
process sharing the database. The constructor does no I/O.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Boolean, String, select, update
from sqlalchemy.orm import Mapped, mapped_column

from smartctx.core.errors import InvalidInput, NotFound
from smartctx.service.owner import check_owner
from smartctx.store import Base, Database

KEY_PREFIX = "sctx_"
ADMIN_OWNER = "admin"
"""The owner of an admin key created without one (an admin acts as any owner it names)."""
_KEY_RE = re.compile(r"^sctx_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")


class APIKeyRow(Base):
    """ORM row of ``api_keys`` (see migration ``0005_i11auth_api_keys``)."""

    __tablename__ = "api_keys"

    key_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    owner: Mapped[str] = mapped_column(String(128), index=True)
    admin: Mapped[bool] = mapped_column(Boolean)
    name: Mapped[str] = mapped_column(String(128))
    digest: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[str] = mapped_column(String(40))
    revoked_at: Mapped[str | None] = mapped_column(String(40), nullable=True)


@dataclass(frozen=True)
class APIKey:
    """What is known about a key (never the key itself)."""

    key_id: str
    owner: str
    admin: bool
    name: str
    created_at: str
    revoked_at: str | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "key_id": self.key_id,
            "owner": self.owner,
            "admin": self.admin,
            "name": self.name,
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
        }


def digest_of(key: str) -> str:
    """The SHA-256 (hex) stored for ``key``."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def looks_like_key(token: str) -> bool:
    """Whether ``token`` has the shape of a smartctx API key (rather than a JWT)."""
    return token.startswith(KEY_PREFIX)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _info(row: APIKeyRow) -> APIKey:
    return APIKey(row.key_id, row.owner, row.admin, row.name, row.created_at, row.revoked_at)


class KeyStore:
    """The API keys of one database (migrated with ``await db.migrate()``)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(
        self, owner: str | None = None, *, admin: bool = False, name: str = ""
    ) -> tuple[APIKey, str]:
        """A new key for ``owner`` (admin keys may omit it); returns its record and the key,
        which is not stored and cannot be shown again."""
        if owner is None and not admin:
            raise InvalidInput("a key needs an owner (--owner NAME) or --admin")
        who = check_owner(owner) if owner is not None else ADMIN_OWNER
        if len(name) > 128:
            raise InvalidInput("a key name has at most 128 characters")
        key_id = secrets.token_hex(6)
        key = f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
        row = APIKeyRow(
            key_id=key_id,
            owner=who,
            admin=admin,
            name=name,
            digest=digest_of(key),
            created_at=_now(),
            revoked_at=None,
        )
        async with self.db.session() as session:
            session.add(row)
        return _info(row), key

    async def list(self, *, include_revoked: bool = True) -> list[APIKey]:
        """Every key's record, oldest first."""
        query = select(APIKeyRow).order_by(APIKeyRow.created_at, APIKeyRow.key_id)
        if not include_revoked:
            query = query.where(APIKeyRow.revoked_at.is_(None))
        async with self.db.session() as session:
            return [_info(row) for row in (await session.execute(query)).scalars()]

    async def revoke(self, key_id: str) -> APIKey:
        """Revoke a key (idempotent); ``NotFound`` when no key has this id."""
        async with self.db.session() as session:
            row = await session.get(APIKeyRow, key_id)
            if row is None:
                raise NotFound(f"no API key {key_id!r}: see `smartctx keys list`")
            if row.revoked_at is None:
                await session.execute(
                    update(APIKeyRow).where(APIKeyRow.key_id == key_id).values(revoked_at=_now())
                )
                row.revoked_at = _now()
            return _info(row)

    async def verify(self, key: str) -> APIKey | None:
        """The record of an active key, or None for a malformed, unknown or revoked one."""
        match = _KEY_RE.match(key)
        if match is None:
            return None
        async with self.db.session() as session:
            row = await session.get(APIKeyRow, match.group(1))
            if row is None or row.revoked_at is not None:
                return None
            if not hmac.compare_digest(row.digest, digest_of(key)):
                return None
            return _info(row)
