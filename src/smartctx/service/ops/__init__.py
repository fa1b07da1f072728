"""Operations: health probes, Prometheus metrics, tracing of turns, structured logs."""

from smartctx.service.ops.health import health_router
from smartctx.service.ops.logs import JsonFormatter, configure_logging
from smartctx.service.ops.metrics import MetricsMiddleware, ServiceMetrics, metrics_router
from smartctx.service.ops.observed import ObservedExecutor
from smartctx.service.ops.tracing import make_tracer

__all__ = [
    "JsonFormatter",
    "MetricsMiddleware",
    "ObservedExecutor",
    "ServiceMetrics",
    "configure_logging",
    "health_router",
    "make_tracer",
    "metrics_router",
]
