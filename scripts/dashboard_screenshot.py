"""Render ``docs/dashboard.png``: the ``/ui`` dashboard on a small helpdesk context.

Starts a server on an ephemeral port (temporary SQLite database, hashing embedder, offline
models), fills a tight ``compression`` context so the funnel has work to
show, opens the page in headless chromium and writes the screenshot.

Usage: .venv/bin/python scripts/dashboard_screenshot.py [--out docs/dashboard.png]
Needs chromium on PATH (Debian: ``apt-get install -y chromium``) and ``playwright==1.65.2``.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

from playwright.async_api import async_playwright, expect

from smartctx.core import HashingEmbedder, Settings
from smartctx.service.client import SmartctxClient
from smartctx.service.dashboard import DASHBOARD_PATH
from smartctx.service.server import serve

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]

VPN_SETUP = "VPN: install the client, then sign in at vpn.example.com with SSO."
TURNS: list[tuple[str, str, str | None]] = [
    ("user", "How do I connect to the VPN from home?", "D1:1"),
    (
        "rag_doc",
        "VPN: install the client, then sign in at vpn.example.com with SSO.",
        "kb:vpn.md#1",
    ),
    ("rag_doc", "If the VPN drops every few minutes, switch the protocol to TCP.", "kb:vpn.md#3"),
    ("tool_log", "GET /vpn/status 200 in 12 ms; tunnel=up; latency=38ms", "tool:http"),
    (
        "agent",
        "Install the VPN client and sign in at vpn.example.com with your SSO account.",
        "D1:2",
    ),
    ("user", "It keeps disconnecting every five minutes.", "D1:3"),
    ("tool_log", "GET /vpn/sessions 200; drops=7 in 35 min; protocol=udp", "tool:http"),
    (
        "rag_doc",
        "VPN: install the client, then sign in at vpn.example.com with SSO.",
        "kb:vpn.md#1",
    ),
    ("agent", "Switch the VPN protocol to TCP in the client settings; drops should stop.", "D1:4"),
    ("memory", "The user works from home on a laptop and prefers short answers.", "profile:7"),
    ("user", "Thanks. And how do I claim the hotel from my trip?", "D1:5"),
    (
        "rag_doc",
        "Expenses: submit hotel receipts within 30 days in the expense tool.",
        "kb:expense.md#1",
    ),
]


async def _fill(url: str) -> None:
    async with SmartctxClient(url) as client:
        await client.create_context(
            "helpdesk-demo",
            preset="compression",
            budget=150,
            keep_recent=2,
            system_prompt="You are the IT helpdesk. Cite sources.",
        )
        for kind, text, source in TURNS:
            await client.add_slot("helpdesk-demo", kind, text, source_id=source)
        await client.create_context("scratch", budget=500)


async def _shoot(url: str, out: Path) -> None:
    executable = shutil.which("chromium")
    if executable is None:
        sys.exit("chromium is not installed: run `sudo apt-get install -y chromium`")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        page = await browser.new_page(viewport={"width": 1360, "height": 760})
        await page.goto(url + DASHBOARD_PATH)
        await page.select_option("#context", "helpdesk-demo")
        await expect(page.locator("#status")).to_have_text("live")
        await expect(page.locator("#slots tr[data-slot-id]").first).to_be_visible()
        async with SmartctxClient(url) as client:
            await client.add_slot(
                "helpdesk-demo", "tool_log", "POST /expense/draft 201", source_id="tool:expense"
            )
        await expect(page.locator("#timeline li.fresh").first).to_be_visible()
        out.parent.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(out), full_page=True)
        await browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/dashboard.png"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp}/shot.db")
        with serve(
            settings, host="127.0.0.1", port=0, embedder=HashingEmbedder(), hooks=[]
        ) as server:
            asyncio.run(_fill(server.url))
            asyncio.run(_shoot(server.url, args.out))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
