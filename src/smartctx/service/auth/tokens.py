"""Bearer JWTs from an external identity provider, verified with PyJWT.

``JWTVerifier.from_settings(settings)`` is None unless ``jwt_secret`` (HS256 and friends) or
``jwks_url`` (RS256/ES256 keys fetched from the provider's JWKS, cached by PyJWT's
``PyJWKClient``) is set. A token is accepted only when its signature, ``exp``/``nbf`` and,
when configured, ``aud`` and ``iss`` check out; the owner is the ``jwt_owner_claim`` claim
(default ``sub``), which must be a valid owner name; ``jwt_admin_claim`` (when set) marks an
admin when its value is true, ``"admin"`` or a list holding ``"admin"``.

``verify`` is synchronous: the first use of a JWKS URL (or a token with an unknown ``kid``)
fetches the key set over HTTP, so the middleware calls it in a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jwt

from smartctx.core.errors import ConfigError, InvalidInput
from smartctx.core.settings import Settings
from smartctx.service.owner import Identity, check_owner

_SECRET_ALGORITHMS = ["HS256"]
_JWKS_ALGORITHMS = ["RS256", "ES256"]


class TokenRejected(Exception):
    """A bearer token failed verification; the message says why (shown to the caller)."""


@dataclass(frozen=True)
class JWTVerifier:
    """Verifies bearer JWTs against a shared secret or a JWKS URL (see the module docstring)."""

    secret: str | None
    jwks_url: str | None
    algorithms: tuple[str, ...]
    audience: str | None = None
    issuer: str | None = None
    owner_claim: str = "sub"
    admin_claim: str | None = None
    _jwks: jwt.PyJWKClient | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if (self.secret is None) == (self.jwks_url is None):
            raise ConfigError("set exactly one of SMARTCTX_JWT_SECRET and SMARTCTX_JWKS_URL")
        if self.secret is not None and len(self.secret.encode()) < 32:
            raise ConfigError("SMARTCTX_JWT_SECRET is too short: use at least 32 bytes")
        if self.jwks_url is not None:
            object.__setattr__(self, "_jwks", jwt.PyJWKClient(self.jwks_url, timeout=10))

    @classmethod
    def from_settings(cls, settings: Settings) -> JWTVerifier | None:
        """The verifier the settings configure, or None when JWTs are not accepted."""
        if not settings.jwt_secret and not settings.jwks_url:
            return None
        default = _SECRET_ALGORITHMS if settings.jwt_secret else _JWKS_ALGORITHMS
        return cls(
            secret=settings.jwt_secret or None,
            jwks_url=None if settings.jwt_secret else settings.jwks_url,
            algorithms=tuple(settings.jwt_algorithms or default),
            audience=settings.jwt_audience,
            issuer=settings.jwt_issuer,
            owner_claim=settings.jwt_owner_claim,
            admin_claim=settings.jwt_admin_claim,
        )

    def _key(self, token: str) -> Any:
        if self.secret is not None:
            return self.secret
        assert self._jwks is not None  # set in __post_init__ whenever secret is None
        try:
            return self._jwks.get_signing_key_from_jwt(token).key
        except jwt.PyJWKClientConnectionError as err:
            raise TokenRejected("the identity provider's key set cannot be fetched") from err
        except jwt.PyJWKClientError as err:
            raise TokenRejected("the token's signing key is not in the provider's key set") from err

    def verify(self, token: str) -> Identity:
        """The identity a valid token carries; ``TokenRejected`` otherwise."""
        try:
            claims = jwt.decode(
                token,
                self._key(token),
                algorithms=list(self.algorithms),
                audience=self.audience,
                issuer=self.issuer,
                options={"require": ["exp"], "verify_aud": self.audience is not None},
            )
        except jwt.ExpiredSignatureError as err:
            raise TokenRejected("the token has expired") from err
        except jwt.PyJWTError as err:
            raise TokenRejected(f"the token is not valid ({type(err).__name__})") from err
        value = claims.get(self.owner_claim)
        if not isinstance(value, str) or not value:
            raise TokenRejected(f"the token has no {self.owner_claim!r} claim naming the owner")
        try:
            owner = check_owner(value)
        except InvalidInput as err:
            raise TokenRejected(err.message) from err
        return Identity(
            owner=owner,
            subject=f"jwt:{owner}",
            admin=self._is_admin(claims),
            authenticated=True,
        )

    def _is_admin(self, claims: dict[str, Any]) -> bool:
        if not self.admin_claim:
            return False
        value = claims.get(self.admin_claim)
        if isinstance(value, list):
            return "admin" in value
        return value is True or value == "admin"
