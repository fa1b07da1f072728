"""A real ``smartctx serve`` child process for the crash and load tests (SIGKILL, SIGTERM)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import httpx

_MAIN = "from smartctx.cli import main; main()"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """``smartctx serve`` in a child process on a fixed port."""

    def __init__(self, database_url: str, tmp: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "SMARTCTX_DATABASE_URL": database_url,
            "SMARTCTX_EMBEDDER": "hashing",
            "SMARTCTX_RETRIEVAL_EMBEDDER": "hashing",
            "SMARTCTX_KB_TOP_K": "0",
        }
        self.log = tmp / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _MAIN, "serve", "--port", str(self.port)],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        with httpx.Client(base_url=self.url, timeout=2) as http:
            for _ in range(600):
                if self.proc.poll() is not None:
                    raise AssertionError(self.log.read_text()[-2000:])
                try:
                    if http.get("/.well-known/agent-card.json").status_code == 200:
                        return
                except httpx.TransportError:
                    threading.Event().wait(0.05)
        raise AssertionError("the server did not start")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def rss_kib(self) -> int:
        """The process's resident set size in KiB (Linux)."""
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(20)
