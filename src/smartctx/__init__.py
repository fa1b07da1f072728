"""smartctx: a context-memory engine for LLM agents, served over the A2A protocol."""

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
)

__version__ = "0.1.0"

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
]
