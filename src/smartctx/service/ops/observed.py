"""The executor with operations around every turn: metrics and a trace span.

``ObservedExecutor`` is :class:`~smartctx.service.executor.SmartctxExecutor` whose ``turn`` (the
path of A2A turns and of the OpenAI proxy alike) runs inside a ``smartctx.turn`` span and is
recorded in :class:`~smartctx.service.ops.metrics.ServiceMetrics`: duration, prompt tokens,
window events and tokens, or the error code of a failed turn. Each answered turn is also one
INFO record of logger ``smartctx.turn`` whose extra fields (``context_id``, ``preset``,
``prompt_tokens``, ``duration_ms``, ``events``, ``trace_id`` when a span is recorded) become
keys of the JSON log line.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from smartctx.agents.models import TokenSink
from smartctx.core.errors import SmartCtxError
from smartctx.service.client import smartctx_info
from smartctx.service.executor import SmartctxExecutor
from smartctx.service.ops.metrics import ServiceMetrics

logger = logging.getLogger("smartctx.turn")


class ObservedExecutor(SmartctxExecutor):
    """A :class:`SmartctxExecutor` with ``metrics`` and ``tracer`` (keyword-only, besides the
    base class's arguments)."""

    def __init__(
        self, *args: Any, metrics: ServiceMetrics, tracer: trace.Tracer, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.metrics = metrics
        self.tracer = tracer

    async def turn(
        self,
        owner: str,
        context_id: str,
        text: str,
        metadata: dict[str, Any],
        *,
        on_token: TokenSink | None = None,
    ) -> tuple[str, dict[str, Any]]:
        start = time.perf_counter()
        attributes = {"smartctx.owner": owner, "smartctx.context_id": context_id}
        with self.tracer.start_as_current_span(
            "smartctx.turn", attributes=attributes, record_exception=False
        ) as span:
            try:
                reply, meta = await super().turn(
                    owner, context_id, text, metadata, on_token=on_token
                )
            except Exception as err:
                code = err.code if isinstance(err, SmartCtxError) else "internal_error"
                self.metrics.turn_failed(time.perf_counter() - start, code)
                span.record_exception(err)
                span.set_status(Status(StatusCode.ERROR, code))
                span.set_attribute("smartctx.error", code)
                raise
            info = smartctx_info(meta)
            events = list(info.get("events") or [])
            prompt_tokens = int(info.get("prompt_tokens") or 0)
            self.metrics.turn_done(time.perf_counter() - start, prompt_tokens, events)
            span.set_attribute("smartctx.preset", str(info.get("preset", "")))
            span.set_attribute("smartctx.prompt_tokens", prompt_tokens)
            span.set_attribute("smartctx.reply_chars", len(reply))
            counts = Counter(str(e.get("kind")) for e in events)
            for kind, count in counts.items():
                span.set_attribute(f"smartctx.events.{kind}", count)
            extra: dict[str, Any] = {
                "context_id": context_id,
                "preset": str(info.get("preset", "")),
                "prompt_tokens": prompt_tokens,
                "duration_ms": round(1000 * (time.perf_counter() - start), 1),
                "events": ",".join(f"{k}={v}" for k, v in sorted(counts.items())),
            }
            if span.get_span_context().is_valid:
                extra["trace_id"] = f"{span.get_span_context().trace_id:032x}"
            logger.info("turn answered in context %s", context_id, extra=extra)
            return reply, meta
