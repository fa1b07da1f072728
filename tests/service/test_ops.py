"""Operations: health probes, Prometheus metrics, tracing of turns, JSON logs, the root URL."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable, Iterator

import httpx
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from prometheus_client.parser import text_string_to_metric_families

from smartctx.core.errors import ConfigError
from smartctx.service.client import SmartctxClient
from smartctx.service.ops import JsonFormatter, configure_logging, make_tracer
from smartctx.service.ops.metrics import ServiceMetrics
from smartctx.service.server import ServerHandle

StartServer = Callable[..., ServerHandle]
LONG = " ".join(f"word{i}" for i in range(200))


def samples(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx.get(f"{url}/metrics", timeout=10).text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_health_and_readiness(server: ServerHandle) -> None:
    assert httpx.get(f"{server.url}/healthz", timeout=10).json() == {"status": "ok"}
    ready = httpx.get(f"{server.url}/readyz", timeout=10)
    assert ready.status_code == 200
    assert ready.json()["checks"] == {"startup": "ok", "database": "ok"}
    server.app.ready = False  # what a graceful shutdown does first
    try:
        not_ready = httpx.get(f"{server.url}/readyz", timeout=10)
    finally:
        server.app.ready = True
    assert not_ready.status_code == 503
    assert not_ready.json()["checks"]["startup"] == "starting or stopping"


async def test_metrics_count_turns_tokens_evictions_and_errors(server: ServerHandle) -> None:
    async with SmartctxClient(server.url) as client:
        reply = await client.send("How do I connect to the VPN?")
        small = {"smartctx": {"preset": "eviction", "budget": 200}}
        first = await client.send("Hello there.", metadata=small)
        for i in range(4):
            await client.send(f"Tell me about item {i}: {LONG[:120]}", first.context_id)
        failed = await client.send(LONG * 3, metadata={"smartctx": {"budget": 60}})
        await client.snapshot(first.context_id)
    assert reply.state == "completed" and failed.state == "failed"
    got = samples(server.url)
    snapshot_route = (("method", "GET"), ("route", "/memory/contexts/{context_id}/snapshot"))
    assert (
        got[("smartctx_http_request_duration_seconds_count", (*snapshot_route, ("status", "200")))]
        == 1
    )
    rpc = (("method", "POST"), ("route", "/"), ("status", "200"))
    assert got[("smartctx_http_request_duration_seconds_count", rpc)] == 7
    assert got[("smartctx_turns_total", (("outcome", "ok"),))] == 6
    assert got[("smartctx_turns_total", (("outcome", "error"),))] == 1
    assert got[("smartctx_errors_total", (("kind", "budget_exceeded"),))] == 1
    assert got[("smartctx_turn_duration_seconds_count", ())] == 7
    assert got[("smartctx_prompt_tokens_count", ())] == 6
    assert got[("smartctx_window_events_total", (("kind", "admitted"),))] >= 12
    assert got[("smartctx_window_events_total", (("kind", "evicted"),))] >= 1
    assert got[("smartctx_window_tokens_total", (("direction", "in"),))] > 0
    assert got[("smartctx_window_tokens_total", (("direction", "out"),))] > 0
    assert got[("smartctx_live_contexts", ())] >= 2


@pytest.fixture
def spans() -> InMemorySpanExporter:
    return InMemorySpanExporter()


async def test_a_turn_is_one_span_when_an_exporter_is_configured(
    start_server: StartServer, spans: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="smartctx.turn")
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    server = start_server(tracer_provider=provider)
    async with SmartctxClient(server.url) as client:
        reply = await client.send("How do I connect to the VPN?", context_id="traced")
        await client.send(LONG * 3, metadata={"smartctx": {"budget": 60}})
    ok, failed = spans.get_finished_spans()
    assert ok.name == failed.name == "smartctx.turn"
    attributes = dict(ok.attributes or {})
    assert attributes["smartctx.context_id"] == "traced"
    assert attributes["smartctx.preset"] == "default"
    assert attributes["smartctx.prompt_tokens"] > 0
    assert attributes["smartctx.events.admitted"] >= 2
    assert attributes["smartctx.reply_chars"] == len(reply.text)
    assert failed.status.status_code is StatusCode.ERROR
    assert dict(failed.attributes or {})["smartctx.error"] == "budget_exceeded"
    assert [e.name for e in failed.events] == ["exception"]
    [record] = [r for r in caplog.records if r.name == "smartctx.turn"]
    assert record.__dict__["context_id"] == "traced"
    assert record.__dict__["trace_id"] == f"{ok.context.trace_id:032x}"
    assert "admitted=" in record.__dict__["events"]


def test_tracer_choice() -> None:
    make_tracer("console")  # the SDK is installed with the dev extra
    with pytest.raises(ConfigError, match="unknown trace exporter 'jaeger'"):
        make_tracer("jaeger")


@pytest.fixture
def restore_root_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers, root.level = handlers, level


@pytest.mark.usefixtures("restore_root_logging")
def test_json_logs_are_one_object_per_line_with_extras_and_errors() -> None:
    stream = io.StringIO()
    configure_logging("json", "INFO", stream=stream)
    log = logging.getLogger("smartctx.test")
    log.info("turn done in %s", "ctx-1", extra={"context_id": "ctx-1", "tokens": 42})
    try:
        raise ValueError("bad thing")
    except ValueError:
        log.exception("turn failed")
    log.debug("not shown at INFO")
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["level"] == "info" and first["logger"] == "smartctx.test"
    assert first["message"] == "turn done in ctx-1"
    assert first["context_id"] == "ctx-1" and first["tokens"] == 42
    assert first["time"].endswith("+00:00")
    assert second["error"] == "ValueError: bad thing" and "Traceback" in second["traceback"]
    assert isinstance(JsonFormatter().format(logging.makeLogRecord({"msg": "x"})), str)


def test_a_browser_at_the_root_url_goes_to_the_dashboard(server: ServerHandle) -> None:
    html = httpx.get(server.url + "/", headers={"Accept": "text/html"}, timeout=10)
    assert html.status_code == 307 and html.headers["location"] == "/ui"
    followed = httpx.get(
        server.url + "/", headers={"Accept": "text/html"}, follow_redirects=True, timeout=10
    )
    assert followed.status_code == 200 and "memory dashboard" in followed.text
    other = httpx.get(server.url + "/", timeout=10)
    assert other.status_code == 405 and other.headers["allow"] == "POST"
    rpc = httpx.post(
        server.url + "/",
        json={"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "nope"}},
        headers={"A2A-Version": "1.0"},
        timeout=10,
    )
    assert rpc.status_code == 200 and rpc.json()["error"]["code"] != -32601


def test_metrics_show_the_embedder_cache_hits_and_misses() -> None:
    counts = [3, 1]
    metrics = ServiceMetrics(embeddings=lambda: (counts[0], counts[1]))
    counts[:] = [10, 4]  # read at scrape time
    text = metrics.exposition().decode()
    assert 'smartctx_embedding_texts{result="hit"} 10.0' in text
    assert 'smartctx_embedding_texts{result="miss"} 4.0' in text
    assert "smartctx_embedding_texts" not in ServiceMetrics().exposition().decode()
