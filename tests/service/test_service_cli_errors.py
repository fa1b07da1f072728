"""Every CLI failure is one line on stderr and a non-zero exit code, through the real entry
point (``smartctx.cli.main``, what the ``smartctx`` script runs); ``serve --log-format json``."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from smartctx.cli import main
from smartctx.service.server import ServerHandle

StartServer = Callable[..., ServerHandle]
LONG = "word " * 300


def smartctx(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the CLI; returns (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    code = done.value.code
    return (code if isinstance(code, int) else 1), out.out, out.err


def one_error_line(err: str) -> str:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    return lines[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_server_down(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    code, _, err = smartctx(capsys, "client", "hi", "--url", url)
    assert code == 1
    assert f"cannot reach the server at {url}" in one_error_line(err)


@pytest.mark.parametrize("url", ["nope", "ftp://127.0.0.1:8000"])
def test_bad_url(capsys: pytest.CaptureFixture[str], url: str) -> None:
    code, _, err = smartctx(capsys, "client", "hi", "--url", url)
    assert code == 1
    assert "bad URL" in one_error_line(err)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["client", "hi", "--bogus"], "No such option: --bogus (see `smartctx client --help`)"),
        (["client", "hi", "--transport", "grpc"], "--transport must be jsonrpc or rest"),
        (["client", "hi", "--budget", "many"], "Invalid value for '--budget'"),
        (["client"], "Missing argument 'MESSAGE'"),
        (["kb", "search", "vpn", "-k", "0"], "greater than or equal to 1"),
        (["serve", "--log-format", "xml"], "--log-format must be text or json"),
        (["nosuchcommand"], "No such command 'nosuchcommand'"),
    ],
)
def test_bad_options_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _, err = smartctx(capsys, *args)
    assert code == 2
    assert message.lower() in one_error_line(err).lower()


def test_a_failed_task_exits_1_with_its_error(
    capsys: pytest.CaptureFixture[str], server: ServerHandle
) -> None:
    code, out, err = smartctx(capsys, "client", LONG, "--url", server.url, "--budget", "60")
    assert code == 1
    assert one_error_line(err).startswith("error: budget_exceeded: pinned slots use")
    assert "None" not in out and "memory:" not in out

    code, out, err = smartctx(
        capsys, "client", LONG, "--url", server.url, "--budget", "60", "--json"
    )
    assert code == 1 and json.loads(out)["state"] == "failed"
    one_error_line(err)

    code, out, err = smartctx(
        capsys, "client", LONG, "--url", server.url, "--budget", "60", "--stream"
    )
    assert code == 1 and "budget_exceeded" in one_error_line(err)


def test_a_refused_request_and_a_down_model_exit_1(
    capsys: pytest.CaptureFixture[str], start_server: StartServer
) -> None:
    server = start_server(llm_base_url=f"http://127.0.0.1:{free_port()}/v1")
    code, _, err = smartctx(capsys, "client", "hi", "--url", server.url, "--preset", "nope")
    assert code == 1 and "unknown preset 'nope'" in one_error_line(err)
    code, _, err = smartctx(capsys, "client", "hi", "--url", server.url)
    assert code == 1 and "upstream_error: chat model at" in one_error_line(err)


def test_success_exits_0_and_json_is_parseable(
    capsys: pytest.CaptureFixture[str], server: ServerHandle
) -> None:
    question = "How do I connect to the VPN?"
    code, out, err = smartctx(capsys, "client", question, "--url", server.url, "--json")
    assert code == 0 and err == ""
    reply = json.loads(out)
    assert reply["state"] == "completed" and reply["snapshot"]["budget"] > 0
    code, out, _ = smartctx(capsys, "client", question, "--url", server.url, "--stream", "--json")
    events = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and events[-1]["state"] == "completed"
    code, out, _ = smartctx(capsys, "info", "--json")
    assert code == 0 and json.loads(out)["settings"]["budget"] > 0


def test_a_missing_file_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SMARTCTX_DATA_DIR", str(tmp_path))
    code, _, err = smartctx(capsys, "kb", "add", str(tmp_path / "missing.md"))
    assert code == 1 and "no such file" in one_error_line(err)


def cli_process(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    code = "from smartctx.cli import main; main()"
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_the_script_fails_in_one_line_in_a_real_process() -> None:
    process = cli_process("client", "hi", "--url", f"http://127.0.0.1:{free_port()}", env={})
    out, err = process.communicate(timeout=60)
    assert process.returncode == 1 and out == ""
    assert "cannot reach the server" in one_error_line(err)


def test_serve_logs_json_lines(tmp_path: Path) -> None:
    env = {
        "SMARTCTX_EMBEDDER": "hashing",
        "SMARTCTX_RETRIEVAL_EMBEDDER": "hashing",
        "SMARTCTX_DATA_DIR": str(tmp_path),
    }
    with cli_process("serve", "--port", "0", "--log-format", "json", env=env) as process:
        assert process.stderr is not None
        records = []
        for line in process.stderr:
            records.append(json.loads(line))
            if "serving on" in records[-1]["message"]:
                break
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
        rest = [json.loads(line) for line in process.stderr.read().splitlines()]
    assert {r["logger"] for r in records} >= {"uvicorn.error", "smartctx.serve"}
    assert all({"time", "level", "logger", "message"} <= set(r) for r in records + rest)
    assert rest[-1]["message"] == "smartctx stopped"


def test_status_reads_health_readiness_and_counters(
    capsys: pytest.CaptureFixture[str], server: ServerHandle
) -> None:
    smartctx(capsys, "client", "How do I connect to the VPN?", "--url", server.url)
    code, out, err = smartctx(capsys, "status", "--url", server.url, "--json")
    assert code == 0 and err == ""
    report = json.loads(out)
    assert report["alive"] and report["ready"]
    assert report["checks"] == {"startup": "ok", "database": "ok"}
    assert report["counters"]["turns"] == {"ok": 1}
    assert report["counters"]["window events"]["admitted"] >= 2
    server.app.ready = False
    try:
        code, out, err = smartctx(capsys, "status", "--url", server.url)
    finally:
        server.app.ready = True
    assert code == 1 and "is not ready: {'startup': 'starting or stopping'}" in one_error_line(err)
    code, _, err = smartctx(capsys, "status", "--url", f"http://127.0.0.1:{free_port()}")
    assert code == 1 and "cannot reach the server" in one_error_line(err)
