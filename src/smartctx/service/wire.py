"""The case of smartctx's keys on the A2A wire: camelCase, like the rest of the protocol.

The ``smartctx`` object in artifact and message metadata (the turn's events, compact snapshot,
prompt tokens, error details; the options of a message) travels with camelCase keys
(``promptTokens``, ``tokensUsed``, ``systemPrompt``...). Python code keeps snake_case: the
executor converts on the way out (:func:`camel_keys`), the client's accessors on the way in
(:func:`snake_keys`), and the server reads a message's options in either case. Only keys change;
values (texts, ids, numbers) never do.
"""

from __future__ import annotations

import re
from typing import Any

METADATA_KEY = "smartctx"
"""The key of smartctx's object in A2A metadata."""

_UPPER = re.compile(r"[A-Z]")


def to_camel(key: str) -> str:
    """``"tokens_used"`` -> ``"tokensUsed"`` (keys without ``_`` are kept)."""
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def to_snake(key: str) -> str:
    """``"tokensUsed"`` -> ``"tokens_used"`` (snake_case keys are kept)."""
    return _UPPER.sub(lambda m: "_" + m.group().lower(), key)


def camel_keys(value: Any) -> Any:
    """``value`` with every dict key, at any depth, in camelCase (a fresh copy)."""
    if isinstance(value, dict):
        return {to_camel(str(k)): camel_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [camel_keys(v) for v in value]
    return value


def snake_keys(value: Any) -> Any:
    """``value`` with every dict key, at any depth, in snake_case (a fresh copy)."""
    if isinstance(value, dict):
        return {to_snake(str(k)): snake_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snake_keys(v) for v in value]
    return value


__all__ = ["METADATA_KEY", "camel_keys", "snake_keys", "to_camel", "to_snake"]
