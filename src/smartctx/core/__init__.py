"""Core vocabulary: slots, errors, token counting, embeddings, settings. Imports nothing of ours."""

from smartctx.core.clock import Clock, ManualClock, SystemClock
from smartctx.core.embeddings import (
    E5Embedder,
    Embedder,
    HashingEmbedder,
    RetrievalEmbedder,
    USEEmbedder,
    get_embedder,
)
from smartctx.core.errors import (
    BudgetExceeded,
    ConfigError,
    Conflict,
    Forbidden,
    InputTooLarge,
    InvalidInput,
    MissingDependency,
    NotFound,
    SmartCtxError,
    UpstreamError,
    UserError,
)
from smartctx.core.recall import Recaller
from smartctx.core.settings import Settings
from smartctx.core.slots import (
    DEFAULT_PRIORITY,
    Event,
    EventKind,
    Slot,
    SlotKind,
    SlotState,
)
from smartctx.core.tokens import PureTiktokenCounter, TiktokenCounter, TokenCounter, get_counter

__all__ = [
    "DEFAULT_PRIORITY",
    "BudgetExceeded",
    "Clock",
    "ConfigError",
    "Conflict",
    "E5Embedder",
    "Embedder",
    "Event",
    "EventKind",
    "Forbidden",
    "HashingEmbedder",
    "InputTooLarge",
    "InvalidInput",
    "ManualClock",
    "MissingDependency",
    "NotFound",
    "PureTiktokenCounter",
    "Recaller",
    "RetrievalEmbedder",
    "Settings",
    "Slot",
    "SlotKind",
    "SlotState",
    "SmartCtxError",
    "SystemClock",
    "TiktokenCounter",
    "TokenCounter",
    "USEEmbedder",
    "UpstreamError",
    "UserError",
    "get_counter",
    "get_embedder",
]
