"""One base error; subclasses say what went wrong and what to do (STYLE.md habit 5).

``ERROR_TABLE`` maps each error to its HTTP status and JSON-RPC code, so every surface answers
the same mistake the same way.
"""

from __future__ import annotations

from typing import Any


class SmartCtxError(Exception):
    """Base of every smartctx error."""

    code = "smartctx_error"

    def __init__(self, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail

    def to_dict(self) -> dict[str, Any]:
        return {"error": self.code, "message": self.message, "detail": self.detail}


class UserError(SmartCtxError):
    """The API was used wrongly: bad arguments or configuration."""

    code = "user_error"


class InvalidInput(UserError):
    """A request or value is malformed (empty message, unknown kind, bad JSON...)."""

    code = "invalid_input"


class InputTooLarge(InvalidInput):
    """A message exceeds the configured size limit."""

    code = "input_too_large"


class ConfigError(UserError):
    """A setting is invalid."""

    code = "config_error"


class MissingDependency(UserError):
    """An optional dependency is missing; the message carries the exact ``pip install`` line."""

    code = "missing_dependency"

    def __init__(self, package: str, extra: str | None = None) -> None:
        line = f"pip install 'smartctx[{extra}]'" if extra else f"pip install {package}"
        super().__init__(f"{package} is not installed: run `{line}`", package=package)


class NotFound(SmartCtxError):
    """A context, slot, owner or item does not exist (for this owner)."""

    code = "not_found"


class Forbidden(SmartCtxError):
    """The caller may not act on this owner's data."""

    code = "forbidden"


class Conflict(SmartCtxError):
    """A write was based on a stale version; ``detail`` carries the current version/cursor."""

    code = "conflict"


class BudgetExceeded(SmartCtxError):
    """Pinned slots alone do not fit the budget; nothing was changed."""

    code = "budget_exceeded"

    def __init__(self, pinned: list[tuple[str, str, int]], budget: int) -> None:
        used = sum(tokens for _, _, tokens in pinned)
        names = ", ".join(f"{kind} {sid[:8]} ({tokens} tokens)" for sid, kind, tokens in pinned)
        super().__init__(
            f"pinned slots use {used:,} tokens of a {budget:,}-token budget ({names}): "
            "raise the budget or shorten the system prompt / current message",
            used=used,
            budget=budget,
            pinned=[{"id": sid, "kind": kind, "tokens": tokens} for sid, kind, tokens in pinned],
        )


class Unavailable(SmartCtxError):
    """The work could not finish now; the same request again completes it (it is idempotent)."""

    code = "unavailable"


class UpstreamError(SmartCtxError):
    """A model endpoint or remote agent failed."""

    code = "upstream_error"


# error class -> (HTTP status, JSON-RPC code). Most specific first; lookups walk the MRO.
ERROR_TABLE: dict[type[SmartCtxError], tuple[int, int]] = {
    InputTooLarge: (413, -32602),
    InvalidInput: (400, -32602),
    ConfigError: (400, -32602),
    MissingDependency: (500, -32603),
    UserError: (400, -32602),
    NotFound: (404, -32001),
    Forbidden: (403, -32003),
    Conflict: (409, -32009),
    BudgetExceeded: (422, -32602),
    UpstreamError: (502, -32603),
    Unavailable: (503, -32603),
    SmartCtxError: (500, -32603),
}


def status_for(error: SmartCtxError) -> tuple[int, int]:
    """HTTP status and JSON-RPC code for ``error``."""
    for klass in type(error).__mro__:
        if klass in ERROR_TABLE:
            return ERROR_TABLE[klass]
    return (500, -32603)
