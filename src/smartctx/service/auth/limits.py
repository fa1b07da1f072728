"""Per-key request rate and open-stream limits, in memory (one server process).

``RateLimiter(per_minute)``: a token bucket per key holding at most ``per_minute`` requests and
refilled at ``per_minute / 60`` a second, so a key may burst up to a minute's allowance and then
sustain the rate. ``take(key)`` answers 0 when the request may go on, else the whole seconds to
wait (the ``Retry-After``). ``StreamLimiter(limit)`` counts open event streams per key. Both cost
O(1) a request; buckets of keys idle for a minute are dropped when the table grows past
``max_keys``, so memory stays bounded. A limit of 0 turns a limiter off. Not thread-safe: they
live on the server's event loop.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable


class RateLimiter:
    """Token buckets per key (see the module docstring)."""

    def __init__(
        self,
        per_minute: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 10_000,
    ) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, last refill)

    def take(self, key: str) -> int:
        """0 when ``key`` may make a request now (one token is spent), else seconds to wait."""
        if self.per_minute <= 0:
            return 0
        now = self._clock()
        rate = self.per_minute / 60.0
        tokens, last = self._buckets.get(key, (float(self.per_minute), now))
        tokens = min(float(self.per_minute), tokens + (now - last) * rate)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            return max(1, math.ceil((1.0 - tokens) / rate))
        if key not in self._buckets and len(self._buckets) >= self._max_keys:
            self._prune(now)
        self._buckets[key] = (tokens - 1.0, now)
        return 0

    def _prune(self, now: float) -> None:
        idle = [k for k, (_, last) in self._buckets.items() if now - last >= 60.0]
        for key in idle or list(self._buckets)[: len(self._buckets) // 2]:
            del self._buckets[key]


class StreamLimiter:
    """Open event streams per key (see the module docstring)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[str, int] = {}

    def acquire(self, key: str) -> bool:
        """Count one more open stream for ``key``; False (nothing counted) when at the limit."""
        if self.limit <= 0:
            return True
        count = self._open.get(key, 0)
        if count >= self.limit:
            return False
        self._open[key] = count + 1
        return True

    def release(self, key: str) -> None:
        """Count one stream of ``key`` as closed."""
        if self.limit <= 0:
            return
        count = self._open.get(key, 0) - 1
        if count > 0:
            self._open[key] = count
        else:
            self._open.pop(key, None)

    def open(self, key: str) -> int:
        """Streams of ``key`` open now."""
        return self._open.get(key, 0)
