"""The a2a-sdk's own OpenTelemetry spans: off unless tracing is configured.

The a2a-sdk wraps its request handling (handler methods, the task manager, the task store...)
in OpenTelemetry spans when the ``opentelemetry`` package is importable, which it always is
here, unless ``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED`` is ``false`` when ``a2a.utils.telemetry``
is first imported. With no tracer provider configured those spans go nowhere, yet each one
still enters and leaves a context: several percent of a served turn's CPU (issue 10).

:func:`quiet_sdk_spans` runs when :mod:`smartctx.service` or the CLI is imported: unless the
variable is set, or tracing is configured (``SMARTCTX_TRACE_EXPORTER`` other than ``none``,
``OTEL_TRACES_EXPORTER``, or a tracer provider already installed in the process), it imports the
SDK's telemetry module with the variable at ``false`` and then removes the variable again, so
child processes see the environment as it was. Set ``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=true``
to keep the SDK's spans; smartctx's own ``smartctx.turn`` span is not affected.
"""

from __future__ import annotations

import os
import sys

SDK_SPANS = "OTEL_INSTRUMENTATION_A2A_SDK_ENABLED"
_TELEMETRY = "a2a.utils.telemetry"


def tracing_configured() -> bool:
    """Whether this process exports traces (or was told to)."""
    for name in ("SMARTCTX_TRACE_EXPORTER", "OTEL_TRACES_EXPORTER"):
        if os.environ.get(name, "").strip().lower() not in ("", "none"):
            return True
    from opentelemetry import trace

    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def quiet_sdk_spans() -> bool:
    """Import the a2a-sdk with its spans off (see the module doc); whether it did."""
    if _TELEMETRY in sys.modules or SDK_SPANS in os.environ or tracing_configured():
        return False
    os.environ[SDK_SPANS] = "false"
    try:
        import a2a.utils.telemetry  # noqa: F401  # reads the variable once, at import
    finally:
        del os.environ[SDK_SPANS]
    return True
