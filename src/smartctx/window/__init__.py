"""The context engine: a token-budgeted window of slots with admission, a funnel and a log.

Pure and synchronous; depends on ``smartctx.core`` only (DESIGN.md sections 2 and 8).

Example::

    from smartctx.core import HashingEmbedder, Slot, SlotKind, get_counter
    from smartctx.window import ContextWindow

    window = ContextWindow(1000, counter=get_counter(), embedder=HashingEmbedder())
    window.add(Slot(SlotKind.SYSTEM, "You are a helpful assistant."))
    window.add(Slot(SlotKind.USER, "How do I connect to the VPN?", pinned=True))
    prompt = window.assemble()
    window.end_turn()
"""

from smartctx.window.admission import AdmissionIndex, Duplicate, kind_group
from smartctx.window.focus import TurnFocus
from smartctx.window.normalize import guard_signature, normalize_text, text_key
from smartctx.window.persist import Changes, touched_by
from smartctx.window.render import Prompt, render_content, render_recalled
from smartctx.window.snapshot import Snapshot
from smartctx.window.stages import (
    DropBelow,
    EvictLowestPriority,
    EvictOldest,
    Stage,
    Summarize,
    compression_preset,
    default_funnel,
    eviction_preset,
    fifo_preset,
)
from smartctx.window.state import WindowState
from smartctx.window.summarizer import SUMMARY_PREFIX, ExtractiveSummarizer, Summarizer
from smartctx.window.window import AddResult, ContextWindow, Listener

__all__ = [
    "SUMMARY_PREFIX",
    "AddResult",
    "AdmissionIndex",
    "Changes",
    "ContextWindow",
    "DropBelow",
    "Duplicate",
    "EvictLowestPriority",
    "EvictOldest",
    "ExtractiveSummarizer",
    "Listener",
    "Prompt",
    "Snapshot",
    "Stage",
    "Summarize",
    "Summarizer",
    "TurnFocus",
    "WindowState",
    "compression_preset",
    "default_funnel",
    "eviction_preset",
    "fifo_preset",
    "guard_signature",
    "kind_group",
    "normalize_text",
    "render_content",
    "render_recalled",
    "text_key",
    "touched_by",
]
