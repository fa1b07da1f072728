"""``smartctx serve`` (a real process, SIGINT for a graceful stop) and ``smartctx client``."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
from typer.testing import CliRunner

from smartctx.cli import app
from smartctx.service.server import ServerHandle


def test_serve_command_starts_answers_and_stops_gracefully(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "SMARTCTX_EMBEDDER": "hashing",
        "SMARTCTX_RETRIEVAL_EMBEDDER": "hashing",
        "SMARTCTX_DATA_DIR": str(tmp_path),
        "COLUMNS": "300",
    }
    code = "from smartctx.cli import main; main()"
    command = [sys.executable, "-c", code, "serve", "--port", "0", "--budget", "777"]
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as process:
        assert process.stdout is not None
        url = None
        for line in process.stdout:
            found = re.search(r"serving on (http://127\.0\.0\.1:\d+)", line)
            if found:
                url = found.group(1)
                break
        assert url is not None
        card = httpx.get(f"{url}/.well-known/agent-card.json").json()
        created = httpx.post(f"{url}/memory/contexts", json={}).json()
        metrics = httpx.get(f"{url}/metrics").text
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
        assert "smartctx stopped" in process.stdout.read()
    assert card["supportedInterfaces"][0]["url"] == f"{url}/"
    assert created["budget"] == 777
    # start-up's objects are out of the collector's reach (a full collection would scan them)
    frozen = re.search(r"^smartctx_gc_frozen_objects (\S+)$", metrics, re.M)
    assert frozen is not None and float(frozen.group(1)) > 10_000, metrics[-2000:]
    assert 'python_gc_collections_total{generation="2"}' in metrics
    assert (tmp_path / "smartctx.db").exists()


def test_client_command_prints_reply_and_snapshot(server: ServerHandle) -> None:
    runner = CliRunner()
    first = runner.invoke(
        app, ["client", "How do I connect to the VPN?", "--url", server.url, "--context", "cli-1"]
    )
    assert first.exit_code == 0, first.output
    assert "agent:" in first.output and "vpn" in first.output.lower()
    assert "[source: kb:vpn.md#" in first.output  # the citation is printed, not read as markup
    assert "context: cli-1" in first.output
    streamed = runner.invoke(
        app,
        [
            "client",
            "Thanks!",
            "--url",
            server.url,
            "-c",
            "cli-1",
            "--stream",
            "--transport",
            "rest",
        ],
    )
    assert streamed.exit_code == 0, streamed.output
    assert "completed" in streamed.output and "memory:" in streamed.output
