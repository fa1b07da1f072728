"""OpenTelemetry tracing of turns.

Spans go to the tracer provider given to the app, else to OpenTelemetry's global provider: a
no-op until the host process configures one (the SDK with an exporter, or
``opentelemetry-instrument``), so tracing costs nothing unless an exporter is configured.
``SMARTCTX_TRACE_EXPORTER=console`` gives the app its own SDK provider that prints every span
(needs ``pip install 'smartctx[tracing]'``).

Each turn is one span ``smartctx.turn`` with the context id, preset, prompt tokens and the
number of window events of each kind; a failed turn's span has status ERROR and the exception.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import trace

from smartctx import __version__
from smartctx.core.errors import ConfigError, MissingDependency

TRACER_NAME = "smartctx"


def console_provider() -> Any:
    """An SDK tracer provider that prints finished spans (``MissingDependency`` without the SDK)."""
    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
    except ImportError as err:
        raise MissingDependency("opentelemetry-sdk", extra="tracing") from err
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
    return provider


def make_tracer(exporter: str, provider: Any | None = None) -> trace.Tracer:
    """The tracer of an app: from ``provider``, else per ``exporter`` (``none``: the global
    provider; ``console``: :func:`console_provider`)."""
    if provider is None and exporter == "console":
        provider = console_provider()
    elif provider is None and exporter != "none":
        raise ConfigError(f"unknown trace exporter {exporter!r}: use 'none' or 'console'")
    return trace.get_tracer(TRACER_NAME, __version__, tracer_provider=provider)
