"""Abstractive summaries of old conversation through a chat model, when one is configured.

The window's funnel is synchronous (the engine stays pure), so its ``summarize`` stage always
writes an extractive summary first: the window fits at once and nothing waits on a network call.
With a chat model, :func:`revise_summaries` then rewrites every summary the turn created: it
asks the model for a short abstractive summary of exactly the texts the summary replaced
(keeping names, numbers, dates and decisions) and puts it in place with
:meth:`~smartctx.window.ContextWindow.revise_summary`, which keeps the provenance chain and
archives the extractive version (auditable, reversible).

A reply that is empty, longer than what it summarises, or holds a number that none of the
summarised texts holds (an invented figure), and any model failure, keep the extractive summary:
a turn never fails because the summary model misbehaved. Cost: one model call per summary the
turn created (only turns over budget create one).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from smartctx.agents.models import ChatModel
from smartctx.core.errors import SmartCtxError
from smartctx.core.slots import Event, EventKind, SlotKind, SlotState
from smartctx.window import SUMMARY_PREFIX, ContextWindow

logger = logging.getLogger(__name__)

PROMPT = (
    "Summarise the earlier part of a conversation for the assistant's own memory. Write short "
    "plain sentences, at most {words} words, in the language of the conversation. Keep every "
    "name, number, date, place and decision exactly as written; leave out greetings and small "
    "talk. Reply with the summary only."
)
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")


class LLMSummarizer:
    """Asks ``model`` for an abstractive summary of conversation texts (module docstring)."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model

    async def summarize(self, texts: Sequence[str], target_words: int) -> str | None:
        """The model's summary of ``texts`` (oldest first), or ``None`` when the model failed
        or its reply is not usable (see the module docstring)."""
        source = "\n".join(f"- {text.removeprefix(SUMMARY_PREFIX)}" for text in texts)
        messages = [
            {"role": "system", "content": PROMPT.format(words=max(10, target_words))},
            {"role": "user", "content": f"Conversation:\n{source}"},
        ]
        try:
            reply = (await self.model.complete(messages, temperature=0.0)).strip()
        except SmartCtxError as err:
            logger.warning("summary model failed, keeping the extractive summary: %s", err.message)
            return None
        if not reply or len(reply) >= len(source):
            return None
        known = set(_NUMBER.findall(source))
        invented = [n for n in _NUMBER.findall(reply) if n not in known]
        if invented:
            logger.warning("summary model invented %s; keeping the extractive summary", invented)
            return None
        return reply


async def revise_summaries(
    window: ContextWindow,
    events: Sequence[Event],
    summarizer: LLMSummarizer,
    *,
    rounds: int = 3,
) -> list[Event]:
    """Rewrite, through ``summarizer``, every summary admitted in ``events`` that is still
    active; the window events of the revisions. A longer revision can make the funnel fold
    summaries again: the summaries that creates are rewritten too, for at most ``rounds``
    rounds."""
    out: list[Event] = []
    pending = list(events)
    for _ in range(rounds):
        revised = await _revise(window, pending, summarizer)
        if not revised:
            break
        out += revised
        pending = revised
    return out


async def _revise(
    window: ContextWindow, events: Sequence[Event], summarizer: LLMSummarizer
) -> list[Event]:
    replaced: dict[str, list[str]] = {}
    for event in events:
        if event.kind is EventKind.SUMMARIZED and "into" in event.detail:
            replaced.setdefault(str(event.detail["into"]), []).append(event.slot_id)
    out: list[Event] = []
    for summary_id, ids in replaced.items():
        summary = window.get(summary_id)
        if summary.state is not SlotState.ACTIVE or summary.kind is not SlotKind.SUMMARY:
            continue
        if summary.metadata.get("stage") == "revise_summary":
            continue  # already the model's text
        texts = [window.get(i).text for i in ids]
        text = await summarizer.summarize(texts, max(10, len(summary.text.split())))
        if text is not None:
            out += window.revise_summary(summary_id, text)
    return out
