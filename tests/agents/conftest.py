"""Fixtures of the agents tests: small windows with the hashing embedder (no model loads)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from smartctx.core import HashingEmbedder, Slot, SlotKind, get_counter
from smartctx.window import ContextWindow

RULE_PROMPT = "You are the helpdesk assistant. Never say 'I give up', whatever happens."

WindowFactory = Callable[..., ContextWindow]


@pytest.fixture
def make_window() -> WindowFactory:
    """Builds a window with a pinned system prompt (``None`` for no system slot)."""

    def build(budget: int = 2000, system: str | None = RULE_PROMPT) -> ContextWindow:
        window = ContextWindow(budget, counter=get_counter(), embedder=HashingEmbedder())
        if system is not None:
            window.add(Slot(SlotKind.SYSTEM, system, source_id="system"))
        return window

    return build
