"""Who owns a request: the authenticated identity, else an owner the caller names, else nobody's.

The owner scopes everything a request can see: context windows, A2A tasks (the SDK's task
store filters by the user name we put in the call context) and the memory API. Every route asks
:func:`owner_of` (or :func:`require_owner` for a ``{owner}`` in the path); nothing reads the
``X-Smartctx-Owner`` header directly.

- Authenticated (an API key or a bearer JWT, checked by
  :class:`~smartctx.service.auth.middleware.AccessMiddleware`): the owner is the identity's.
  Only an admin may name another owner with ``X-Smartctx-Owner`` (and then acts as it).
- Anonymous (loopback or ``--no-auth``): the owner the caller names with ``X-Smartctx-Owner``;
  a caller naming none gets a fresh owner of its own per request (``anon-<random>``, echoed in
  the response's ``X-Smartctx-Owner``), so two header-less callers never share memory.

An owner name is 1-128 characters of letters, digits and ``-_.:@``; anything else is rejected
as invalid input.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass
from typing import Any

from a2a.auth.user import User
from a2a.extensions.common import HTTP_EXTENSION_HEADER, get_requested_extensions
from a2a.server.context import ServerCallContext
from a2a.server.routes import ServerCallContextBuilder
from starlette.requests import HTTPConnection, Request

from smartctx.core.errors import Forbidden, InvalidInput, SmartCtxError

OWNER_HEADER = "X-Smartctx-Owner"
DEFAULT_OWNER = "default"
IDENTITY_KEY = "smartctx.identity"
"""Where the access middleware leaves the :class:`Identity` in the ASGI scope's ``state``."""
UNRESOLVED_OWNER = "!unresolved"
"""The owner of an A2A call whose owner header was malformed: a name no caller can own, so the
call reaches nobody's tasks (messages are rejected by the request handler)."""
_OWNER_RE = re.compile(r"^[A-Za-z0-9_.:@-]{1,128}$")


def check_owner(value: str | None) -> str:
    """The owner named by ``value`` (``"default"`` when empty); ``InvalidInput`` when malformed."""
    if value is None or not value.strip():
        return DEFAULT_OWNER
    owner = value.strip()
    if not _OWNER_RE.match(owner):
        raise InvalidInput(
            f"owner {owner[:40]!r} is invalid: use 1-128 letters, digits or -_.:@",
            owner=owner[:128],
        )
    return owner


def owner_from_headers(headers: Any) -> str:
    """The owner a caller names in its headers (any mapping with ``get``); ``"default"`` if none."""
    value = headers.get(OWNER_HEADER) or headers.get(OWNER_HEADER.lower())
    return check_owner(value)


def anonymous_owner() -> str:
    """A fresh owner name nobody else holds (``anon-`` and 22 random URL-safe characters)."""
    return "anon-" + secrets.token_urlsafe(16)


@dataclass(frozen=True)
class Identity:
    """Who is calling. ``subject`` names the credential (``key:<id>``, ``jwt:<sub>``) or
    ``anonymous``; ``owner`` is the credential's owner, or for an anonymous caller the fresh
    owner it gets when it names none."""

    owner: str
    subject: str = "anonymous"
    admin: bool = False
    authenticated: bool = False

    @classmethod
    def anonymous(cls) -> Identity:
        return cls(owner=anonymous_owner())


def identity_of(connection: HTTPConnection) -> Identity:
    """The identity the access middleware found (an anonymous one when it is not installed)."""
    state = connection.scope.setdefault("state", {})
    identity = state.get(IDENTITY_KEY)
    if not isinstance(identity, Identity):
        identity = Identity.anonymous()
        state[IDENTITY_KEY] = identity
    return identity


def _named(connection: HTTPConnection) -> str | None:
    value = connection.headers.get(OWNER_HEADER)
    return value if value is not None and value.strip() else None


def owner_of(source: HTTPConnection | ServerCallContext | None) -> str:
    """The owner of a request (see the module docstring) or of an A2A call context.

    Raises ``InvalidInput`` for a malformed owner header and ``Forbidden`` when a non-admin
    identity names another owner than its own.
    """
    if source is None:
        return DEFAULT_OWNER
    if isinstance(source, ServerCallContext):
        owner = source.state.get("owner")
        return owner if isinstance(owner, str) and owner else DEFAULT_OWNER
    identity = identity_of(source)
    named = _named(source)
    if named is None:
        return identity.owner
    owner = check_owner(named)
    if identity.authenticated and owner != identity.owner and not identity.admin:
        raise Forbidden(
            f"this credential belongs to owner {identity.owner!r}; only an admin key may act "
            f"as {owner!r}"
        )
    return owner


def owner_of_context(connection: HTTPConnection, context_id: str) -> str:
    """The owner of a request that names ``context_id`` (the OpenAI-compatible proxy's).

    As :func:`owner_of`, except that an anonymous caller naming no owner gets an owner derived
    from the context (``anon-`` and a digest of it) instead of a fresh one per request: an
    unmodified OpenAI client continues its conversation from request to request, and two
    anonymous conversations still never share memory.
    """
    identity = identity_of(connection)
    if identity.authenticated or _named(connection) is not None:
        return owner_of(connection)
    return context_owner(context_id)


def context_owner(context_id: str) -> str:
    """The anonymous owner of ``context_id``: ``anon-`` and 22 characters of its SHA-256."""
    digest = hashlib.sha256(context_id.encode()).digest()
    return "anon-" + base64.urlsafe_b64encode(digest[:16]).decode().rstrip("=")


def require_owner(connection: HTTPConnection, owner: str, *, admin_only: bool = False) -> str:
    """``owner`` (from a path) when the caller may act on it; ``Forbidden`` otherwise.

    An admin may act on any owner. ``admin_only`` routes (whole-owner operations) are refused to
    every authenticated non-admin; an anonymous caller (no authentication configured) may act on
    the owner it names itself, as the local single user.
    """
    who = check_owner(owner)
    identity = identity_of(connection)
    if identity.admin:
        return who
    if admin_only and identity.authenticated:
        raise Forbidden("this operation needs an admin key")
    if owner_of(connection) != who:
        raise Forbidden(
            f"this request acts as another owner than {who!r}: name it with {OWNER_HEADER} or "
            "use its key"
        )
    return who


def require_admin(connection: HTTPConnection) -> Identity:
    """The caller's identity when it is an admin; ``Forbidden`` otherwise."""
    identity = identity_of(connection)
    if not identity.admin:
        raise Forbidden("this operation needs an admin key")
    return identity


class OwnerUser(User):
    """An A2A user whose name is the smartctx owner."""

    def __init__(self, owner: str, *, authenticated: bool = False) -> None:
        self._owner = owner
        self._authenticated = authenticated

    @property
    def is_authenticated(self) -> bool:
        return self._authenticated

    @property
    def user_name(self) -> str:
        return self._owner


class OwnerContextBuilder(ServerCallContextBuilder):
    """Builds the A2A call context with the request's owner (:func:`owner_of`) as its user.

    A malformed owner header gives the owner :data:`UNRESOLVED_OWNER` here, because the SDK
    offers no way to reject a request from a context builder; the error is recorded in the call
    state and :class:`~smartctx.service.handler.GuardedRequestHandler` rejects the message with
    an invalid-params error instead.
    """

    def build(self, request: Request) -> ServerCallContext:
        headers = dict(request.headers)
        identity = identity_of(request)
        try:
            owner = owner_of(request)
        except SmartCtxError as err:
            owner = UNRESOLVED_OWNER
            headers["x-smartctx-owner-error"] = err.message
        return ServerCallContext(
            user=OwnerUser(owner, authenticated=identity.authenticated),
            state={"headers": headers, "owner": owner, "identity": identity},
            requested_extensions=get_requested_extensions(
                request.headers.getlist(HTTP_EXTENSION_HEADER)
            ),
        )
