"""``smartctx keys create|list|revoke`` on a database file: the key is printed once, listed
never, and refused by a running server from the moment it is revoked."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest
from typer.testing import CliRunner

from smartctx.cli import app
from smartctx.service.server import ServerHandle

StartServer = Callable[..., ServerHandle]


def test_keys_create_list_revoke(
    start_server: StartServer, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SMARTCTX_DATABASE_URL", db_url)
    runner = CliRunner()
    created = runner.invoke(app, ["keys", "create", "--owner", "nora", "--name", "laptop"])
    assert created.exit_code == 0, created.output
    key = next(line for line in created.output.splitlines() if line.startswith("sctx_"))
    admin = json.loads(runner.invoke(app, ["keys", "create", "--admin", "--json"]).output)
    no_owner = runner.invoke(app, ["keys", "create"])
    server = start_server(auth=True)
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}) as http:
        before = http.get("/memory/contexts")
        listed = runner.invoke(app, ["keys", "list", "--json"])
        key_id = key.split("_")[1]
        revoked = runner.invoke(app, ["keys", "revoke", key_id])
        after = http.get("/memory/contexts")
    active = runner.invoke(app, ["keys", "list", "--json"])
    everything = runner.invoke(app, ["keys", "list", "--all", "--json"])
    unknown = runner.invoke(app, ["keys", "revoke", "000000000000"])
    assert no_owner.exit_code == 1 and "--admin" in no_owner.output
    assert admin["admin"] is True and admin["key"].startswith("sctx_")
    assert before.status_code == 200 and before.json()["owner"] == "nora"
    rows = json.loads(listed.output)
    assert {r["owner"] for r in rows} == {"nora", "admin"}
    # the secret (after "sctx_<key id>_"; it may itself hold "_") is never listed
    assert key not in listed.output and key.split("_", 2)[2] not in listed.output
    assert revoked.exit_code == 0 and after.status_code == 401
    assert [r["key_id"] for r in json.loads(active.output)] == [admin["key_id"]]
    assert len(json.loads(everything.output)) == 2
    assert unknown.exit_code == 1 and "no API key" in unknown.output
