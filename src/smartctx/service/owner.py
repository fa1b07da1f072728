"""Who owns a request: the ``X-Smartctx-Owner`` header, else ``"default"``.

The owner scopes everything a request can see: context windows, A2A tasks (the SDK's task
store filters by the user name we put in the call context) and the memory API. An owner name is
1-128 characters of letters, digits and ``-_.:@``; anything else is rejected as invalid input.
"""

from __future__ import annotations

import re
from typing import Any

from a2a.auth.user import User
from a2a.extensions.common import HTTP_EXTENSION_HEADER, get_requested_extensions
from a2a.server.context import ServerCallContext
from a2a.server.routes import ServerCallContextBuilder
from starlette.requests import Request

from smartctx.core.errors import InvalidInput

OWNER_HEADER = "X-Smartctx-Owner"
DEFAULT_OWNER = "default"
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
    """The owner of a request given its headers (any mapping with ``get``)."""
    value = headers.get(OWNER_HEADER) or headers.get(OWNER_HEADER.lower())
    return check_owner(value)


class OwnerUser(User):
    """An A2A user whose name is the smartctx owner (no authentication is claimed)."""

    def __init__(self, owner: str) -> None:
        self._owner = owner

    @property
    def is_authenticated(self) -> bool:
        return False

    @property
    def user_name(self) -> str:
        return self._owner


class OwnerContextBuilder(ServerCallContextBuilder):
    """Builds the A2A call context with the owner as its user.

    A malformed owner header falls back to ``"default"`` here, because the SDK offers no way to
    reject a request from a context builder; the error is recorded in the call state and
    :class:`~smartctx.service.handler.GuardedRequestHandler` rejects the message with an
    invalid-params error instead.
    """

    def build(self, request: Request) -> ServerCallContext:
        headers = dict(request.headers)
        try:
            owner = owner_from_headers(request.headers)
        except InvalidInput as err:
            owner = DEFAULT_OWNER
            headers["x-smartctx-owner-error"] = err.message
        return ServerCallContext(
            user=OwnerUser(owner),
            state={"headers": headers, "owner": owner},
            requested_extensions=get_requested_extensions(
                request.headers.getlist(HTTP_EXTENSION_HEADER)
            ),
        )


def owner_of(context: ServerCallContext | None) -> str:
    """The owner recorded in an A2A call context (``"default"`` when absent)."""
    if context is None:
        return DEFAULT_OWNER
    owner = context.state.get("owner")
    return owner if isinstance(owner, str) and owner else DEFAULT_OWNER
