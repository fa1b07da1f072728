"""Stored pairs never hold a detected secret in the clear; a reversible copy is optional.

``store_pairs`` keeps a pair's texts redacted (``privacy.redact``). With
``SMARTCTX_SECRET_COPIES=encrypted`` and a Fernet key in ``SMARTCTX_SECRETS_KEY`` (make one with
``python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"``),
the original texts of a pair that had a secret are kept encrypted in ``mem_pair_secrets``, for
an owner who must get them back (``SecretVault.reveal``); with ``none`` (the default) the
originals are kept nowhere. Forgetting the pair or its owner deletes the copy.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from cryptography.fernet import Fernet, InvalidToken
from sqlalchemy.ext.asyncio import AsyncSession

from smartctx.core.errors import ConfigError

_metadata = sa.MetaData()
PAIR_SECRETS = sa.Table(
    "mem_pair_secrets",
    _metadata,
    sa.Column("owner", sa.String(128), primary_key=True),
    sa.Column("pair_id", sa.String(64), primary_key=True),
    sa.Column("user_cipher", sa.Text, nullable=False),
    sa.Column("assistant_cipher", sa.Text, nullable=False),
)


class SecretVault:
    """Encrypts and decrypts pair texts with one Fernet key (AES-128-CBC with HMAC-SHA256)."""

    def __init__(self, key: str) -> None:
        try:
            self._fernet = Fernet(key.encode())
        except (ValueError, TypeError) as err:
            raise ConfigError(
                "SMARTCTX_SECRETS_KEY is not a Fernet key: generate one with Fernet.generate_key()"
            ) from err

    @classmethod
    def from_settings(cls, settings: Any) -> SecretVault | None:
        """The vault the settings ask for, or None when no copy is to be kept."""
        if getattr(settings, "secret_copies", "none") != "encrypted":
            return None
        key = getattr(settings, "secrets_key", None)
        secret = key.get_secret_value() if key is not None else ""
        if not secret:
            raise ConfigError(
                "SMARTCTX_SECRET_COPIES=encrypted needs SMARTCTX_SECRETS_KEY (a Fernet key)"
            )
        return cls(secret)

    def seal(self, text: str) -> str:
        return self._fernet.encrypt(text.encode()).decode()

    def open(self, token: str) -> str:
        try:
            return self._fernet.decrypt(token.encode()).decode()
        except InvalidToken as err:
            raise ConfigError("the secrets key does not open this copy") from err

    async def keep(
        self, session: AsyncSession, owner: str, pair_id: str, user: str, assistant: str
    ) -> None:
        """Store the encrypted originals of one pair."""
        await session.execute(
            PAIR_SECRETS.insert().values(
                owner=owner,
                pair_id=pair_id,
                user_cipher=self.seal(user),
                assistant_cipher=self.seal(assistant),
            )
        )

    async def reveal(self, session: AsyncSession, owner: str, pair_id: str) -> tuple[str, str]:
        """The original (user, assistant) texts of a pair; ``KeyError`` when none is kept."""
        row = (
            await session.execute(
                sa.select(PAIR_SECRETS.c.user_cipher, PAIR_SECRETS.c.assistant_cipher).where(
                    PAIR_SECRETS.c.owner == owner, PAIR_SECRETS.c.pair_id == pair_id
                )
            )
        ).first()
        if row is None:
            raise KeyError(pair_id)
        return self.open(row[0]), self.open(row[1])


async def drop_copies(session: AsyncSession, owner: str, pair_ids: list[str] | None = None) -> int:
    """Delete the encrypted copies of ``owner``'s pairs (all of them when ``pair_ids`` is None)."""
    query = PAIR_SECRETS.delete().where(PAIR_SECRETS.c.owner == owner)
    if pair_ids is not None:
        query = query.where(PAIR_SECRETS.c.pair_id.in_(pair_ids))
    result: Any = await session.execute(query)
    return int(result.rowcount or 0)


__all__ = ["PAIR_SECRETS", "SecretVault", "drop_copies"]
