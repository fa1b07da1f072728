"""smartctx: a context-memory engine for LLM agents, served over the A2A protocol.

The core vocabulary is imported eagerly; everything else on first use, so ``import smartctx``
stays light. Example::

    from smartctx import ContextWindow, Slot, SlotKind, get_counter

    window = ContextWindow(1000, counter=get_counter())
    window.add(Slot(SlotKind.SYSTEM, "You are the helpdesk."))
"""

from __future__ import annotations

import importlib
from typing import Any

from smartctx.core import (
    DEFAULT_PRIORITY,
    BudgetExceeded,
    Event,
    EventKind,
    Settings,
    Slot,
    SlotKind,
    SlotState,
    SmartCtxError,
    get_counter,
    get_embedder,
)

__version__ = "0.1.0"

_LAZY = {
    "ContextWindow": "smartctx.window",
    "Prompt": "smartctx.window",
    "Snapshot": "smartctx.window",
    "default_funnel": "smartctx.window",
    "eviction_preset": "smartctx.window",
    "compression_preset": "smartctx.window",
    "fifo_preset": "smartctx.window",
    "Database": "smartctx.store",
    "Agent": "smartctx.agents",
    "Thread": "smartctx.agents",
    "ContextProvider": "smartctx.agents",
    "GroundedResponder": "smartctx.agents",
    "OpenAIChatModel": "smartctx.agents",
    "KnowledgeBase": "smartctx.retrieval.kb",
    "PersonalMemory": "smartctx.memory",
    "normalize_memory_context": "smartctx.memory",
    "build_memory_update": "smartctx.memory",
    "serve": "smartctx.service",
    "SmartctxClient": "smartctx.service",
}

__all__ = [
    "DEFAULT_PRIORITY",
    "BudgetExceeded",
    "Event",
    "EventKind",
    "Settings",
    "Slot",
    "SlotKind",
    "SlotState",
    "SmartCtxError",
    "__version__",
    "get_counter",
    "get_embedder",
    *sorted(_LAZY),
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'smartctx' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
