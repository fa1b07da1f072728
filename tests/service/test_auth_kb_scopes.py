"""Knowledge-base scopes over real HTTP: an owner's documents are retrieved for that owner only;
the organisation-wide base is written by admins and retrieved for everyone."""

from __future__ import annotations

from collections.abc import Callable

import httpx
from test_auth_faces import bearer, make_key

from smartctx.core import HashingEmbedder
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.retrieval.kb_scopes import ORG_SCOPE
from smartctx.service.client import SmartctxClient
from smartctx.service.server import ServerHandle
from smartctx.store import Database

StartServer = Callable[..., ServerHandle]
PRIVATE = "# Vault\n\nThe vault door code of the lab is 5521, changed every Monday."
ORG = "# Parking\n\nVisitor parking is on level P3; ask reception for a parking token."


def sources(reply_events: list[dict[str, object]]) -> set[str]:
    return {str(e.get("source_id")) for e in reply_events if e.get("slot_kind") == "rag_doc"}


async def test_owner_documents_stay_with_their_owner(
    start_server: StartServer, db_url: str
) -> None:
    org_db = Database(db_url)  # the server's organisation base writes through it
    try:
        await _owner_documents_stay_with_their_owner(start_server, db_url, org_db)
    finally:
        await org_db.close()


async def _owner_documents_stay_with_their_owner(
    start_server: StartServer, db_url: str, org_db: Database
) -> None:
    org = KnowledgeBase(embedder=HashingEmbedder(), db=org_db, owner=ORG_SCOPE)
    server = start_server(auth=True, kb=org)
    lea, max_key, admin = (
        await make_key(db_url, "lea"),
        await make_key(db_url, "max"),
        await make_key(db_url, admin=True),
    )
    async with httpx.AsyncClient(base_url=server.url) as http:
        own = await http.put(
            "/memory/kb/documents/vault.md", json={"text": PRIVATE}, headers=bearer(lea)
        )
        org_by_user = await http.put(
            "/memory/kb/documents/parking.md?scope=org", json={"text": ORG}, headers=bearer(lea)
        )
        org_by_admin = await http.put(
            "/memory/kb/documents/parking.md?scope=org", json={"text": ORG}, headers=bearer(admin)
        )
        seen_by_max = (await http.get("/memory/kb/documents", headers=bearer(max_key))).json()
        seen_by_lea = (await http.get("/memory/kb/documents", headers=bearer(lea))).json()
        remove_other = await http.delete("/memory/kb/documents/vault.md", headers=bearer(max_key))
    assert own.status_code == 200 and own.json()["chunks"] >= 1
    assert org_by_user.status_code == 403 and org_by_admin.status_code == 200
    assert [d["name"] for d in seen_by_lea["owner"]] == ["vault.md"]
    assert seen_by_max["owner"] == [] and "parking.md" in [d["name"] for d in seen_by_max["org"]]
    assert remove_other.status_code == 404
    question = "What is the vault door code of the lab?"
    async with SmartctxClient(server.url, api_key=lea) as client:
        lea_reply = await client.send(question)
        lea_parking = await client.send("Where is visitor parking?")
    async with SmartctxClient(server.url, api_key=max_key) as client:
        max_reply = await client.send(question)
        max_parking = await client.send("Where is visitor parking?")
    assert any(s.startswith("kb:vault.md") for s in sources(lea_reply.events))
    assert not any(s.startswith("kb:vault.md") for s in sources(max_reply.events))
    assert "5521" not in max_reply.text
    assert any(s.startswith("kb:parking.md") for s in sources(lea_parking.events))
    assert any(s.startswith("kb:parking.md") for s in sources(max_parking.events))
