"""Window options of a context (preset, budget, system prompt) and the factory that builds them.

A context's options are chosen once, when it is created (memory API ``POST /memory/contexts`` or
the ``smartctx`` metadata of the first A2A message), and persisted with it: the budget in the
context row, the preset in the row's metadata, the system prompt as the pinned ``system`` slot.
Later messages cannot change them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from smartctx.core.embeddings import Embedder
from smartctx.core.errors import InvalidInput
from smartctx.core.recall import Recaller
from smartctx.core.settings import Settings
from smartctx.core.slots import Slot, SlotKind
from smartctx.core.tokens import TokenCounter
from smartctx.service.wire import METADATA_KEY, to_snake
from smartctx.window import (
    ContextWindow,
    DropBelow,
    EvictLowestPriority,
    Stage,
    Summarize,
    Summarizer,
    TurnFocus,
    compression_preset,
    default_funnel,
    eviction_preset,
    fifo_preset,
)


def _default(settings: Settings, keep_recent: int) -> list[Stage]:
    if keep_recent == 4 and settings.drop_below == 3.0:
        return default_funnel()
    return [DropBelow(settings.drop_below), Summarize(keep_recent), EvictLowestPriority()]


PRESETS: dict[str, Callable[[Settings, int], list[Stage]]] = {
    "default": _default,
    "eviction": lambda _settings, _keep: eviction_preset(),
    "compression": lambda _settings, keep: compression_preset(keep),
    "fifo": lambda _settings, _keep: fifo_preset(),
}
"""Funnel presets by name (DESIGN.md section 2), given the settings and ``keep_recent``."""

COMPACT_SYSTEM_PROMPT = "You are a helpdesk assistant. Answer from context; cite sources."
"""Used instead of the configured system prompt when the budget is under ``COMPACT_BELOW``
tokens and no prompt was given, so a small window (the 100-token compression seed) has room."""

COMPACT_BELOW = 400


@dataclass(frozen=True, slots=True)
class ContextOptions:
    """How a new context's window is built. ``system_prompt=""`` means no system slot."""

    preset: str
    budget: int
    system_prompt: str
    keep_recent: int = 4

    def to_dict(self) -> dict[str, Any]:
        return {"preset": self.preset, "budget": self.budget, "keep_recent": self.keep_recent}


def make_options(
    settings: Settings,
    *,
    preset: str | None = None,
    budget: int | None = None,
    system_prompt: str | None = None,
    keep_recent: int | None = None,
) -> ContextOptions:
    """Validated options, with the server's defaults for what is not given."""
    keep = settings.keep_recent if keep_recent is None else keep_recent
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 0:
        raise InvalidInput(f"keep_recent must be an integer >= 0, got {keep_recent!r}")
    name = preset or "default"
    if name not in PRESETS:
        raise InvalidInput(f"unknown preset {name!r}: use one of {', '.join(PRESETS)}", preset=name)
    size = settings.budget if budget is None else budget
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise InvalidInput(f"budget must be a positive integer, got {budget!r}")
    if system_prompt is None:
        prompt = COMPACT_SYSTEM_PROMPT if size < COMPACT_BELOW else settings.system_prompt
    else:
        prompt = system_prompt
    return ContextOptions(preset=name, budget=size, system_prompt=prompt.strip(), keep_recent=keep)


def options_from_metadata(settings: Settings, metadata: dict[str, Any]) -> ContextOptions | None:
    """Options from A2A message metadata ``{"smartctx": {"preset", "budget", "systemPrompt",
    "keepRecent"}}`` (snake_case keys are accepted too); ``None`` when the message carries none;
    ``InvalidInput`` when they are malformed."""
    raw = metadata.get(METADATA_KEY)
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise InvalidInput("metadata 'smartctx' must be an object like {'preset': 'eviction'}")
    raw = {to_snake(str(key)): value for key, value in raw.items()}
    unknown = set(raw) - {"preset", "budget", "system_prompt", "keep_recent"}
    if unknown:
        raise InvalidInput(f"unknown smartctx options: {', '.join(sorted(unknown))}")
    budget, keep = (_whole(raw.get(name)) for name in ("budget", "keep_recent"))
    preset = raw.get("preset")
    prompt = raw.get("system_prompt")
    if preset is not None and not isinstance(preset, str):
        raise InvalidInput("smartctx.preset must be a string")
    if prompt is not None and not isinstance(prompt, str):
        raise InvalidInput("smartctx.systemPrompt must be a string")
    return make_options(
        settings, preset=preset, budget=budget, system_prompt=prompt, keep_recent=keep
    )


def _whole(value: Any) -> Any:
    """JSON numbers arrive as floats through protobuf ``Struct``: whole ones become ints."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


RECALL_PRESETS = frozenset({"default"})
"""Presets whose windows get a recaller (when the factory has one)."""


class WindowFactory:
    """Builds and restores context windows with the server's counter, embedder and settings.

    With ``recaller`` (a factory of :class:`~smartctx.core.recall.Recaller` objects), every
    window of a preset in ``recall_presets`` gets its own recaller, so ``assemble(query)``
    recalls archived slots of the thread relevant to the query into the prompt; those windows
    also get a :class:`~smartctx.window.TurnFocus` (``settings.focus_keep_turns``), so a new
    turn's prompt holds the last exchanges and what the request needs, not every earlier turn.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        counter: TokenCounter,
        embedder: Embedder | None,
        summarizer: Summarizer | None = None,
        recaller: Callable[[], Recaller] | None = None,
        recall_presets: frozenset[str] = RECALL_PRESETS,
    ) -> None:
        self.settings = settings
        self.counter = counter
        self.embedder = embedder
        self.summarizer = summarizer
        self.recaller = recaller
        self.recall_presets = recall_presets

    def _kwargs(self, preset: str, keep_recent: int) -> dict[str, Any]:
        if preset not in PRESETS:
            raise InvalidInput(f"unknown preset {preset!r}")
        recall = self.recaller is not None and preset in self.recall_presets
        keep = self.settings.focus_keep_turns
        focus = (
            TurnFocus(keep_turns=keep, recall_share=self.settings.focus_recall_share)
            if recall and keep is not None
            else None
        )
        return {
            "focus": focus,
            "recaller": self.recaller() if recall and self.recaller is not None else None,
            "counter": self.counter,
            "funnel": PRESETS[preset](self.settings, keep_recent),
            "embedder": self.embedder,
            "dedup_threshold": self.settings.dedup_threshold,
            "summarizer": self.summarizer,
            "recall_ratio": self.settings.recall_ratio,
        }

    def new(self, options: ContextOptions) -> ContextWindow:
        """A fresh window with its pinned system slot (``BudgetExceeded`` if it cannot fit)."""
        window = ContextWindow(options.budget, **self._kwargs(options.preset, options.keep_recent))
        if options.system_prompt:
            window.add(
                Slot(SlotKind.SYSTEM, options.system_prompt, pinned=True, source_id="system")
            )
        return window

    def restore(
        self, log: list[Slot], events: list[Any], budget: int, preset: str, keep_recent: int
    ) -> ContextWindow:
        """The window rebuilt exactly from its stored log and events."""
        return ContextWindow.restore(log, events, budget, **self._kwargs(preset, keep_recent))

    def caught_up(
        self,
        base: ContextWindow,
        changed: list[Slot],
        new_slots: list[Slot],
        new_events: list[Any],
        budget: int,
        preset: str,
        keep_recent: int,
    ) -> ContextWindow:
        """``base`` brought up to what was saved after it (:meth:`ContextWindow.caught_up`)."""
        return ContextWindow.caught_up(
            base, changed, new_slots, new_events, budget, **self._kwargs(preset, keep_recent)
        )
