"""Prometheus metrics of one service app, served at ``GET /metrics``.

Every app has its own ``CollectorRegistry`` (two apps in one process, as in the tests, do not
share counters). Metrics:

- ``smartctx_turns_total{outcome}``: turns run (A2A and the OpenAI proxy), ``ok`` or ``error``;
- ``smartctx_turn_duration_seconds``: histogram of a turn's wall time, model call included;
- ``smartctx_prompt_tokens``: histogram of the tokens of the prompt sent to the model;
- ``smartctx_window_tokens_total{direction}``: tokens that entered the windows (``in``:
  admitted, recalled) and left them (``out``: dropped, summarized, evicted);
- ``smartctx_window_events_total{kind}``: window events (admitted, refused, merged, dropped,
  summarized, evicted, recalled...): evictions are ``kind="evicted"``, recalls
  ``kind="recalled"``;
- ``smartctx_errors_total{kind}``: failed turns by error code (``budget_exceeded``,
  ``upstream_error``, ``internal_error``...);
- ``smartctx_live_contexts``: gauge of the context windows held in memory now;
- ``smartctx_embedding_texts{result}``: texts the similarity embedder was asked for since start,
  ``hit`` (its cache held them) or ``miss`` (the model embedded them: a few milliseconds each);
- ``smartctx_http_request_duration_seconds{method,route,status}``: histogram of HTTP request
  latency by route template (``/memory/contexts/{context_id}/snapshot``), measured by
  :class:`MetricsMiddleware` until the response has started;
- ``python_gc_*``: the cyclic garbage collector's runs and objects per generation
  (``prometheus_client``'s own collector), and ``smartctx_gc_frozen_objects``: the objects
  ``smartctx serve`` moved out of its reach after start-up (see
  :func:`smartctx.service.app.freeze_start_up`).

Cost per turn: one pass over the turn's events; nothing proportional to history.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.gc_collector import GCCollector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from smartctx.service.owner import identity_of, require_admin

TOKENS_IN = frozenset({"admitted", "recalled"})
TOKENS_OUT = frozenset({"dropped", "summarized", "evicted"})
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
_TOKEN_BUCKETS = (64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 131072)


class ServiceMetrics:
    """The metrics of one app (see the module docstring). The constructor does no I/O."""

    def __init__(
        self,
        live_contexts: Callable[[], int] | None = None,
        embeddings: Callable[[], tuple[int, int]] | None = None,
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.turns = Counter("smartctx_turns", "Turns run", ["outcome"], registry=r)
        self.turn_seconds = Histogram(
            "smartctx_turn_duration_seconds",
            "Wall time of a turn",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.prompt_tokens = Histogram(
            "smartctx_prompt_tokens", "Prompt tokens sent", buckets=_TOKEN_BUCKETS, registry=r
        )
        self.window_tokens = Counter(
            "smartctx_window_tokens", "Tokens into and out of windows", ["direction"], registry=r
        )
        self.events = Counter("smartctx_window_events", "Window events", ["kind"], registry=r)
        self.errors = Counter("smartctx_errors", "Failed turns by error", ["kind"], registry=r)
        self.live = Gauge("smartctx_live_contexts", "Windows held in memory", registry=r)
        self.http_seconds = Histogram(
            "smartctx_http_request_duration_seconds",
            "HTTP request latency until the response starts",
            ["method", "route", "status"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        if live_contexts is not None:
            self.live.set_function(lambda: float(live_contexts()))
        if embeddings is not None:
            texts = Gauge(
                "smartctx_embedding_texts",
                "Texts the similarity embedder was asked for since start, by whether its cache "
                "held them (hit) or the model embedded them (miss)",
                ["result"],
                registry=r,
            )
            texts.labels("hit").set_function(lambda: float(embeddings()[0]))
            texts.labels("miss").set_function(lambda: float(embeddings()[1]))
        GCCollector(registry=r)
        frozen = Gauge("smartctx_gc_frozen_objects", "Objects frozen after start-up", registry=r)
        frozen.set_function(lambda: float(gc.get_freeze_count()))

    def turn_done(self, seconds: float, prompt_tokens: int, events: list[dict[str, Any]]) -> None:
        """Record a turn that answered, with its events (as described on the wire)."""
        self.turns.labels("ok").inc()
        self.turn_seconds.observe(seconds)
        self.prompt_tokens.observe(prompt_tokens)
        for event in events:
            kind = str(event.get("kind", "unknown"))
            self.events.labels(kind).inc()
            tokens = int(event.get("tokens") or 0)
            if kind in TOKENS_IN:
                self.window_tokens.labels("in").inc(tokens)
            elif kind in TOKENS_OUT:
                self.window_tokens.labels("out").inc(tokens)

    def turn_failed(self, seconds: float, kind: str) -> None:
        """Record a turn that failed with error code ``kind``."""
        self.turns.labels("error").inc()
        self.turn_seconds.observe(seconds)
        self.errors.labels(kind).inc()

    def exposition(self) -> bytes:
        """The Prometheus text format of every metric."""
        return bytes(generate_latest(self.registry))


class MetricsMiddleware:
    """Times each HTTP request until its response starts (a stream's first byte), labelled by
    the matched route's template, so ids in paths do not multiply the series."""

    def __init__(self, app: ASGIApp, metrics: ServiceMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        observed = False

        async def timed_send(message: Message) -> None:
            nonlocal observed
            if message["type"] == "http.response.start" and not observed:
                observed = True
                route = getattr(scope.get("route"), "path", None) or "unmatched"
                self.metrics.http_seconds.labels(
                    scope["method"], route, str(message["status"])
                ).observe(time.perf_counter() - start)
            await send(message)

        await self.app(scope, receive, timed_send)


def metrics_router(metrics: ServiceMetrics) -> APIRouter:
    """``GET /metrics`` in the Prometheus text format."""
    router = APIRouter(tags=["smartctx: operations"])

    @router.get(
        "/metrics",
        summary="Prometheus metrics (an admin key when auth is on)",
        response_class=Response,
    )
    async def scrape(request: Request) -> Response:
        if identity_of(request).authenticated:
            require_admin(request)  # counters of every owner: not for an owner's key
        return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)

    return router
