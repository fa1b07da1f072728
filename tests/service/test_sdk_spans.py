"""The a2a-sdk's spans are off unless tracing is configured, and the environment stays as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = """
import json, os, sys
if sys.argv[1] == "provider":
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    trace.set_tracer_provider(TracerProvider())
import smartctx.cli
from a2a.utils import telemetry
print(json.dumps({"spans": telemetry.otel_enabled,
                  "env": os.environ.get("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED")}))
"""


@pytest.mark.parametrize(
    ("extra", "setup", "spans"),
    [
        ({}, "", False),
        ({"OTEL_INSTRUMENTATION_A2A_SDK_ENABLED": "true"}, "", True),
        ({"SMARTCTX_TRACE_EXPORTER": "console"}, "", True),
        ({"OTEL_TRACES_EXPORTER": "otlp"}, "", True),
        ({}, "provider", True),
    ],
)
def test_sdk_spans_follow_the_tracing_setup(extra: dict[str, str], setup: str, spans: bool) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "OTEL_INSTRUMENTATION_A2A_SDK_ENABLED",
            "SMARTCTX_TRACE_EXPORTER",
            "OTEL_TRACES_EXPORTER",
        )
    }
    out = subprocess.run(
        [sys.executable, "-c", PROBE, setup or "-"],
        env={**env, **extra},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["spans"] is spans
    # the process's environment (what its children inherit) is the one it was given
    assert result["env"] == extra.get("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED")
