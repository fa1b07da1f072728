"""What the served offline agent replies in a thread: one server as ``smartctx serve`` runs it
(the USE embedders, the shipped knowledge base, personal memory, recall of archived slots
through the relevance gate, the calibrated GroundedResponder), asked over A2A as a user asks."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from smartctx.core import Settings
from smartctx.service.client import SmartctxClient
from smartctx.service.server import ServerHandle, serve


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    """One server for the module, configured as ``smartctx serve`` is by default (its models,
    its knowledge base on the database); each test talks as its own owner, in new contexts."""
    config = Settings(data_dir=tmp_path_factory.mktemp("replies"))
    handle = serve(config, host="127.0.0.1", port=0)
    yield handle
    handle.stop()


async def thread(server: ServerHandle, owner: str, messages: Sequence[str]) -> list[str]:
    """The replies to ``messages`` sent in order in one new context of ``owner``."""
    replies: list[str] = []
    context: str | None = None
    async with SmartctxClient(server.url, owner=owner) as client:
        for text in messages:
            reply = await client.send(text, context_id=context)
            context = reply.context_id
            replies.append(reply.text)
    return replies


LOST = "Report a lost or stolen laptop within 24 hours"


async def test_a_follow_up_after_a_change_of_topic_is_about_the_new_topic(
    served: ServerHandle,
) -> None:
    # the VPN troubleshooting chunk archived turns ago says "contact the helpdesk": "Who should
    # I contact?" after "I lost my laptop on the train" must not bring it back and answer by it
    asked = [
        "How do I connect to the VPN?",
        "How many vacation days do I get?",
        "How do I reset my password?",
        "What is the limit for hotel costs?",
        "I lost my laptop on the train",
        "Who should I contact?",
    ]
    replies = await thread(served, "thread-lost", asked)
    assert replies[-1].startswith(LOST), replies[-1]
    assert "kb:vpn.md" not in replies[-1]
    fresh = await thread(served, "fresh-lost", asked[-2:])
    assert fresh[-1] == replies[-1]


SICK = "From the fourth consecutive day of sickness a doctor's certificate is required"


async def test_sick_leave_is_answered_without_a_sentence_about_another_leave(
    served: ServerHandle,
) -> None:
    # "Tell HR at least 8 weeks before the leave starts" (parental leave) shares only "leave"
    for owner, asked in [
        ("fresh-sick", ["What about sick leave?"]),
        ("thread-sick", ["How many vacation days do I get?", "What about sick leave?"]),
    ]:
        reply = (await thread(served, owner, asked))[-1]
        assert reply.startswith(SICK), reply
        assert reply.endswith("[source: kb:leave.md#2]"), reply


async def test_a_reply_from_memory_shows_no_internal_id(served: ServerHandle) -> None:
    # from personal memory (remembered exchanges "pair:...", profile and summaries) and the
    # long-term memory ("mem:..."), in another context: what the user told us is said back,
    # uncited
    said = ["My employee number is 48213.", "Hi, I'm Priya and I work in the Berlin office."]
    await thread(served, "remembering", said)
    asked = ["What is my employee number?", "What is my name?", "What do you know about me?"]
    replies = await thread(served, "remembering", asked)
    assert "48213" in replies[0] and "Priya" in replies[1] and "Berlin" in replies[2], replies
    for reply in replies:
        assert "[source:" not in reply and "mem:" not in reply and "pair:" not in reply, reply


PAYROLL = "Finance checks the claim within 5 working days and pays approved amounts"


async def test_when_one_is_paid_back_is_answered_by_the_step_that_pays(
    served: ServerHandle,
) -> None:
    # not by the claim deadline ("submit a claim ... within 30 days of the expense")
    asked = [
        "How do I submit my expenses?",
        "How long does reimbursement take?",
        "And when do I get paid back?",
    ]
    replies = await thread(served, "thread-paid", asked)
    assert replies[-1].startswith(PAYROLL), replies[-1]
    assert "30 days" not in replies[-1] and "parental" not in replies[-1], replies[-1]
    fresh = await thread(served, "fresh-paid", ["When do I get paid back for my expenses?"])
    assert fresh[0].startswith(PAYROLL), fresh[0]
