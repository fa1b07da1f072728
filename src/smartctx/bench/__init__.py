"""Benchmarks: each writes its own section of ``docs/benchmarks.md`` and an optional JSON file.

``smartctx bench window`` measures the context engine (:mod:`smartctx.bench.window`); the shared
helpers that stamp a section with its command and machine live in :mod:`smartctx.bench.docs`.
"""

from smartctx.bench.docs import machine_info, write_section

__all__ = ["machine_info", "write_section"]
