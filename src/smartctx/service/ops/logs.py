"""Structured logs on request: one JSON object per line (``smartctx serve --log-format json``).

Each line has ``time`` (UTC, ISO 8601), ``level``, ``logger`` and ``message``, plus any extra
fields the call passed (``logger.info("...", extra={"context_id": ...})``) and, for an
exception, ``error`` (its type and message) and ``traceback``. ``configure_logging`` installs
one stream handler on the root logger; uvicorn's loggers propagate to it when uvicorn is given
``log_config=None``.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, Literal, TextIO

LogFormat = Literal["text", "json"]
_STANDARD = frozenset(
    logging.LogRecord("", 0, "", 0, "", None, None).__dict__.keys() | {"message", "asctime"}
)


class JsonFormatter(logging.Formatter):
    """Formats a record as one JSON line (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value if isinstance(value, str | int | float | bool) else repr(value)
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            out["error"] = f"{type(exc).__name__}: {exc}"
            out["traceback"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def configure_logging(
    log_format: LogFormat = "text", level: str = "INFO", stream: TextIO | None = None
) -> logging.Handler:
    """Send every log record to ``stream`` (stderr) as text or JSON lines; returns the handler.

    Replaces the root logger's handlers, so calling it twice does not duplicate lines.
    """
    handler = logging.StreamHandler(stream or sys.stderr)
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers = []
        logging.getLogger(name).propagate = True
    return handler
