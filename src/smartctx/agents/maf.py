"""Microsoft Agent Framework adapter: a smartctx provider as an Agent Framework context provider.

Targets ``agent-framework-core`` 1.x, whose context providers subclass
``agent_framework.ContextProvider(source_id)`` and override the hooks
``before_run(*, agent, session, context, state)`` and ``after_run(...)`` (the earlier
``invoking``/``invoked`` hooks are gone). The package is optional: without it,
:func:`as_agent_framework_provider` raises ``MissingDependency`` with the install line.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from smartctx.agents.providers import ContextProvider
from smartctx.core import MissingDependency


@cache
def _adapter_class() -> type[Any]:
    try:
        from smartctx.agents._maf_provider import SmartCtxContextProvider
    except ImportError as exc:
        raise MissingDependency("agent-framework-core", extra="agent-framework") from exc
    return SmartCtxContextProvider


def as_agent_framework_provider(provider: ContextProvider, *, source_id: str | None = None) -> Any:
    """An ``agent_framework.ContextProvider`` that delegates to ``provider``.

    ``source_id`` (default ``smartctx:<provider name>``) attributes the added messages. Pass the
    result in ``Agent(..., context_providers=[...])``. Raises ``MissingDependency`` when
    ``agent-framework-core`` is not installed.
    """
    cls = _adapter_class()
    return cls(provider, source_id or f"smartctx:{provider.name}")
