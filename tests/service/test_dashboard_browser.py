"""The dashboard in a real headless browser (Debian's chromium driven by Playwright).

A server runs on an ephemeral port (``create_app`` mounts the dashboard); slots added through
the memory API must appear in the page, and a slot added while the page is open must show up
live (from the SSE stream) without reloading. Every wait is an explicit Playwright condition.

If chromium or Playwright is missing the tests FAIL (never skip) with the install commands.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from smartctx.service.client import SmartctxClient
from smartctx.service.dashboard import DASHBOARD_PATH
from smartctx.service.server import ServerHandle

try:
    from playwright.async_api import Browser, Page, async_playwright, expect

    PLAYWRIGHT_MISSING = False
except ImportError:  # pragma: no cover - only on a machine without the dev extras
    PLAYWRIGHT_MISSING = True

StartServer = Callable[..., ServerHandle]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
TIMEOUT_MS = 15_000


def chromium_path() -> str:
    """The chromium executable, or a test failure that says how to install it."""
    if PLAYWRIGHT_MISSING:
        pytest.fail("Playwright is not installed: run `.venv/bin/pip install playwright==1.65.2`")
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail(
            "chromium is not installed, so the dashboard cannot be tested in a browser: run "
            "`sudo apt-get update && sudo apt-get install -y chromium` (Debian/Ubuntu), "
            "or put a chromium binary on PATH"
        )
    return path


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    executable = chromium_path()
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()


async def open_dashboard(browser: Browser, url: str) -> tuple[Page, list[Any]]:
    """A page showing the dashboard, and the list its uncaught script errors go to."""
    page = await browser.new_page(viewport={"width": 1360, "height": 820})
    page.set_default_timeout(TIMEOUT_MS)
    errors: list[Any] = []
    page.on("pageerror", lambda error: errors.append(error))
    response = await page.goto(url + DASHBOARD_PATH)
    assert response is not None and response.ok
    return page, errors


async def test_slots_gauge_and_live_events_appear(
    start_server: StartServer, browser: Browser
) -> None:
    server = start_server()
    async with SmartctxClient(server.url, owner="default") as client:
        await client.create_context("other", budget=500)
        await client.create_context("helpdesk", budget=300, system_prompt="You are the helpdesk.")
        await client.add_slot("helpdesk", "user", "How do I connect to the VPN?")
        await client.add_slot(
            "helpdesk", "rag_doc", "The VPN portal is vpn.example.com.", source_id="kb:vpn.md#1"
        )
        snapshot = await client.snapshot("helpdesk")

        page, errors = await open_dashboard(browser, server.url)
        await expect(page.locator("#context option[value=helpdesk]")).to_have_count(1)
        await page.select_option("#context", "helpdesk")

        rows = page.locator("#slots tr[data-slot-id]")
        await expect(rows).to_have_count(3)
        await expect(rows.locator("td:nth-child(2)")).to_have_text(["system", "user", "rag_doc"])
        rag = page.locator("#slots tr[data-kind=rag_doc]")
        await expect(rag).to_contain_text("kb:vpn.md#1")
        await expect(page.locator("#slots tr[data-kind=system]")).to_contain_text("pinned")
        used = snapshot["tokens_used"]
        await expect(page.locator("#gauge-text")).to_have_text(f"{used} / 300 tokens")
        await expect(page.locator("#gauge > div")).to_have_count(3)
        await expect(page.locator("#timeline li[data-kind=admitted]")).to_have_count(3)
        await expect(page.locator("#status")).to_have_text("live")

        added = await client.add_slot(
            "helpdesk", "tool_log", "GET /vpn/status 200 in 12 ms", source_id="tool:http"
        )
        refused = await client.add_slot(
            "helpdesk", "rag_doc", "The VPN portal is vpn.example.com.", source_id="kb:vpn.md#1"
        )

        timeline = page.locator("#timeline li")
        live = timeline.filter(has_text="tool:http")
        await expect(live).to_have_attribute("data-kind", "admitted")
        await expect(live).to_have_class("fresh")
        await expect(timeline.first).to_have_attribute("data-kind", "refused")
        await expect(page.locator("#slots tr[data-kind=tool_log]")).to_contain_text("tool:http")
        after = added["snapshot"]["tokens_used"]
        assert refused["admitted"] is False and refused["snapshot"]["tokens_used"] == after
        await expect(page.locator("#gauge-text")).to_have_text(f"{after} / 300 tokens")
    assert errors == []


async def test_the_owner_field_scopes_the_context_picker(
    start_server: StartServer, browser: Browser
) -> None:
    server = start_server()
    async with SmartctxClient(server.url, owner="alice") as alice:
        await alice.create_context("alice-notes", budget=100)
        await alice.add_slot("alice-notes", "memory", "Alice prefers short answers.")
    async with SmartctxClient(server.url, owner="default") as default:
        await default.create_context("shared-desk", budget=100)

    page, errors = await open_dashboard(browser, server.url)
    options = page.locator("#context option:not([value=''])")
    await expect(options).to_have_count(1)
    await expect(options).to_have_attribute("value", "shared-desk")
    await page.fill("#owner", "alice")
    await page.press("#owner", "Enter")
    await expect(options).to_have_attribute("value", "alice-notes")
    await page.select_option("#context", "alice-notes")
    await expect(page.locator("#slots tr[data-kind=memory]")).to_contain_text("short answers")
    assert errors == []


async def test_logging_in_with_a_key_shows_that_owner_s_contexts(
    start_server: StartServer, browser: Browser, db_url: str
) -> None:
    from test_auth_faces import make_key

    server = start_server(auth=True)
    key = await make_key(db_url, "olga")
    async with SmartctxClient(server.url, api_key=key) as olga:
        await olga.create_context("olga-notes", budget=100)
        await olga.add_slot("olga-notes", "memory", "Olga takes the night shift.")

    page, _errors = await open_dashboard(browser, server.url)
    await expect(page.locator("#status")).to_contain_text("log in")
    options = page.locator("#context option:not([value=''])")
    await page.fill("#apikey", key)
    await page.press("#apikey", "Enter")
    await expect(options).to_have_attribute("value", "olga-notes")
    await page.select_option("#context", "olga-notes")
    await expect(page.locator("#slots tr[data-kind=memory]")).to_contain_text("night shift")
    assert key not in page.url


async def test_a_row_expands_to_the_full_slot_text(
    start_server: StartServer, browser: Browser
) -> None:
    server = start_server()
    long_text = "The travel policy says " + "economy class for short trips; " * 20 + "TAIL-7."
    async with SmartctxClient(server.url, owner="default") as client:
        await client.create_context("desk", budget=2000)
        added = await client.add_slot("desk", "rag_doc", long_text, source_id="kb:travel.md#1")
    page, errors = await open_dashboard(browser, server.url)
    await page.select_option("#context", "desk")
    row = page.locator(f"#slots tr[data-slot-id='{added['slot']['id']}']")
    await expect(row).to_have_count(1)
    detail = page.locator(f"#slots tr[data-detail-for='{added['slot']['id']}']")
    await expect(detail).to_have_count(0)
    await row.click()
    await expect(detail.locator("pre")).to_have_text(long_text)
    await expect(page.locator("#slots tr[data-slot-id]")).to_have_count(2)
    await row.click()
    await expect(detail).to_have_count(0)
    assert errors == []


async def test_the_prompt_view_shows_what_the_model_received_with_recalled_slots(
    start_server: StartServer, browser: Browser
) -> None:
    server = start_server()
    async with SmartctxClient(server.url, owner="default") as client:
        await client.create_context("recall", budget=400)
        await client.send("My locker code is 4711 at the gym downstairs.", "recall")
        for i in range(6):
            await client.send(
                f"Filler question number {i} about printers, toner, paper jams and the "
                f"office coffee machine schedule on floor {i}.",
                "recall",
            )
        await client.send("What is my locker code at the gym?", "recall")
        http = client._http
        sent = (await http.get("/memory/contexts/recall/last-prompt")).json()
    recalled = sent["recalled"]
    assert any("4711" in s["text"] for s in recalled)

    page, errors = await open_dashboard(browser, server.url)
    await page.select_option("#context", "recall")
    await page.click("nav.tabs button[data-view=prompt]")
    await expect(page.locator("#view-prompt")).to_be_visible()
    await expect(page.locator("#view-window")).to_be_hidden()
    await expect(page.locator("#prompt-gauge-text")).to_have_text(
        f"{sent['tokens']} / 400 tokens sent"
    )
    await expect(page.locator("#prompt-gauge > div[data-kind=recalled]")).to_have_count(1)
    await expect(page.locator("#prompt-slots tr[data-how=recalled]")).to_have_count(len(recalled))
    await expect(
        page.locator("#prompt-slots tr[data-how=recalled]").filter(has_text="4711")
    ).not_to_have_count(0)
    messages = page.locator("#prompt-messages .message")
    await expect(messages).to_have_count(len(sent["messages"]))
    await expect(messages.last).to_contain_text(sent["messages"][-1]["content"][:30])
    assert errors == []


async def test_profile_pairs_and_audit_views_accept_mark_wrong_and_forget(
    start_server: StartServer, browser: Browser
) -> None:
    server = start_server(hooks=None)
    async with SmartctxClient(server.url, owner="default") as client:
        http = client._http
        for pid, text in (("p1", "I like jazz"), ("p2", "I love green tea")):
            body = {"id": pid, "user_text": text, "assistant_text": "Noted.", "session_id": pid}
            assert (await http.post("/memory/owners/default/pairs", json=body)).status_code == 201
        assert (await http.post("/memory/owners/default/compact?force=true")).status_code == 200
        items = (await http.get("/memory/owners/default/profile")).json()["items"]
    assert len(items) >= 2

    page, errors = await open_dashboard(browser, server.url)
    page.on("dialog", lambda dialog: dialog.accept())
    await page.click("nav.tabs button[data-view=profile]")
    rows = page.locator("#profile tr[data-item-id]")
    await expect(rows).to_have_count(len(items))
    jazz = rows.filter(has_text="jazz")
    await expect(jazz).to_have_attribute("data-status", "candidate")
    await jazz.locator("button[data-action=accept]").click()
    await expect(jazz).to_have_attribute("data-status", "confirmed")
    await expect(jazz.locator("button[data-action=accept]")).to_be_disabled()
    await jazz.locator("button[data-action=wrong]").click()
    await expect(jazz).to_have_attribute("data-status", "rejected")
    busan = rows.filter(has_text="green tea")
    await busan.locator("button[data-action=forget]").click()
    await expect(rows.filter(has_text="green tea")).to_have_count(0)

    await page.click("nav.tabs button[data-view=pairs]")
    pairs = page.locator("#pairs tr[data-pair-id]")
    await expect(pairs).to_have_count(2)
    await pairs.filter(has_text="jazz").locator("button[data-action=forget]").click()
    await expect(pairs).to_have_count(1)
    await expect(pairs.first).to_have_attribute("data-pair-id", "p2")

    await page.click("nav.tabs button[data-view=audit]")
    actions = page.locator("#audit tr[data-action]")
    await expect(actions.first).to_be_visible()
    shown = await actions.evaluate_all("rows => rows.map(r => r.dataset.action)")
    async with SmartctxClient(server.url, owner="default") as client:
        records = (await client._http.get("/memory/owners/default/audit")).json()["records"]
    assert shown == [r["action"] for r in records] and len(shown) >= 3
    assert errors == []


async def test_personal_views_say_when_personal_memory_is_off(
    start_server: StartServer, browser: Browser
) -> None:
    server = start_server()  # hooks=[]: no personal-memory API
    page, errors = await open_dashboard(browser, server.url)
    await page.click("nav.tabs button[data-view=profile]")
    await expect(page.locator("#profile")).to_contain_text("personal memory is not enabled")
    assert errors == []


async def test_the_page_loads_every_resource_it_asks_for(
    start_server: StartServer, browser: Browser
) -> None:
    # a browser asks for /favicon.ico unless the page names an icon; a 404 there is an error in
    # the console of every newcomer who opens the dashboard
    server = start_server()
    page = await browser.new_page()
    failed: list[str] = []
    page.on(
        "console", lambda message: failed.append(message.text) if message.type == "error" else None
    )
    page.on("response", lambda response: failed.append(response.url) if not response.ok else None)
    await page.goto(server.url + DASHBOARD_PATH)
    await page.wait_for_load_state("networkidle")
    await page.close()
    assert failed == []
