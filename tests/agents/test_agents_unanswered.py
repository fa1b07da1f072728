"""Questions a newcomer asks that the shipped knowledge base does not answer: the responder
abstains, though the chunks a search brings share a word with them, and still answers the
questions those chunks do answer (smartctx.agents.grounded, smartctx.agents.answer_scoring)."""

from __future__ import annotations

import pytest

from smartctx.agents import NO_INFORMATION, GroundedResponder
from smartctx.agents.answer_scoring import answer_types, derived_in, has_type, score
from smartctx.agents.builtin_providers import with_lead_in
from smartctx.agents.knowledge import extract_knowledge
from smartctx.core.embeddings import get_embedder
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.retrieval.kb_sources import builtin_corpus


@pytest.fixture(scope="module")
def served() -> GroundedResponder:
    """The responder the server uses: USE multilingual with the calibrated options."""
    return GroundedResponder.calibrated(get_embedder("use"))


@pytest.fixture(scope="module")
def corpus() -> KnowledgeBase:
    """The shipped documents, chunked as the server chunks them (nothing embedded)."""
    kb = KnowledgeBase(embedder=None, bridge_embedder=None)
    for name, text in builtin_corpus().items():
        kb.add_text(name, text)
    return kb


def reply(responder: GroundedResponder, kb: KnowledgeBase, question: str, *sources: str) -> str:
    """The reply to ``question`` with the chunks ``sources`` in the prompt, as a search puts
    them there (a chunk that opens with a list led in by its section's title)."""
    context = []
    for source in sources:
        chunk = kb.chunk(source)
        text = with_lead_in(chunk.text, chunk.title)
        context.append({"role": "system", "content": f"[source: {source}] {text}"})
    return responder.respond([*context, {"role": "user", "content": question}])


EXPENSES = "kb:expense-reimbursement.md#1"
LAUT, EN = "Laut kb:", " (auf Englisch): "


@pytest.mark.parametrize(
    ("question", "sources"),
    [
        # a name no sentence holds is what the question is about
        ("How do I install Zoom?", ("kb:vpn.md#2", "kb:laptops.md#3")),
        ("How do I get a Zoom license for Priya?", ("kb:vpn.md#2", "kb:laptops.md#3")),
        ("What is the Euro exchange rate?", (EXPENSES,)),
        # "Singapore airport" is an airport, not a place where the Wi-Fi tip applies
        ("How do I get to Singapore airport?", ("kb:vpn.md#4",)),
        # the only word shared is a name ("Customer visit to Acme Ltd, Berlin")
        ("What is the Berlin office's phone number?", (EXPENSES,)),
        # an instruction for something else ("Attach a photo ... A card slip is not a receipt")
        ("How do I order new business cards?", (EXPENSES,)),
        # "sign" is not "signature"; "Enter your company e-mail address" shares no word
        ("How do I set up my email signature?", ("kb:password-reset.md#1", "kb:vpn.md#2")),
        # in its own language, a sentence that shares no word is not carried by similarity
        ("What are the office opening hours?", ("kb:leave.md#2", "kb:laptops.md#2")),
        # "visit" is not "Visitenkarten"
        ("Wie bestelle ich Visitenkarten?", (EXPENSES,)),
        # an action no sentence says, in any words: "laptop" is where the user prints from;
        # "bank" and "payroll" are in the claim procedure's last step, "change" in none
        ("How do I print from my laptop?", ("kb:laptops.md#1", "kb:laptops.md#2")),
        ("How do I change my bank account for payroll?", (EXPENSES,)),
        # a thing no sentence names, whose adjective they say of another thing only
        ("How do I report a broken chair?", ("kb:laptops.md#1", "kb:laptops.md#2")),
        ("How do I report a broken printer?", ("kb:laptops.md#1", "kb:laptops.md#2")),
    ],
)
def test_a_question_the_chunks_do_not_answer_is_declined(
    served: GroundedResponder, corpus: KnowledgeBase, question: str, sources: tuple[str, ...]
) -> None:
    assert NO_INFORMATION in reply(served, corpus, question, *sources)


def test_a_best_sentence_unrelated_in_meaning_gives_the_abstention_not_an_empty_reply(
    served: GroundedResponder, corpus: KnowledgeBase
) -> None:
    # "company" is its one shared word, its similarity below zero: nothing was said at all
    out = reply(served, corpus, "Who is the CEO of the company?", "kb:vpn.md#1")
    assert out == NO_INFORMATION


@pytest.mark.parametrize(
    ("question", "sources", "start"),
    [
        ("What is the hotel limit in Singapore?", (EXPENSES,), "Hotels: up to USD 180"),
        # a person or a customer the rule is applied with or for is not what is asked about
        ("Can I expense a taxi for Priya?", (EXPENSES,), "Taxis: allowed"),
        ("Can I book a hotel for Priya in London?", (EXPENSES,), "Hotels: up to USD 180"),
        ("Can I fly business class?", (EXPENSES,), "Flights: economy class"),
        ("What is the meal per diem?", (EXPENSES,), "Meals: a daily allowance of USD 60"),
        ("How do I connect to the VPN on a new laptop?", ("kb:vpn.md#2",), "1. Open the"),
        ("The airport Wi-Fi blocks the VPN, what now?", ("kb:vpn.md#4",), "Hotel or airport Wi-Fi"),
        (
            "Can I install other software?",
            ("kb:vpn.md#2", "kb:laptops.md#3"),
            "Install",
        ),
        ("What number do I call for the helpdesk?", ("kb:password-reset.md#1",), "If you have"),
        ("Wie setze ich mein Passwort zurück?", ("kb:password-reset.md#1",), "Laut"),
        # a noun of the question's language that no English sentence holds draws the question
        # towards the sentences that say it in English: no unknown name
        ("Wie viele Urlaubstage habe ich?", ("kb:leave.md#1",), f"{LAUT}leave.md#1{EN}Full-time"),
        ("Wie lange muss ein Passwort sein?", ("kb:password-reset.md#2",), f"{LAUT}password"),
        ("Wie viel darf ein Hotel pro Nacht kosten?", (EXPENSES,), f"{LAUT}expense"),
        ("Wie beantrage ich Elternzeit?", ("kb:leave.md#3",), f"{LAUT}leave.md#3{EN}Parents"),
        ("Wie installiere ich Software?", ("kb:laptops.md#3",), f"{LAUT}laptops.md#3{EN}Install"),
        ("Kann ich ein Taxi abrechnen?", (EXPENSES,), f"{LAUT}expense-reimbursement.md#1{EN}Taxis"),
        # how long reimbursement takes is when the claim is paid, not the claim's deadline
        ("How long does reimbursement take?", (EXPENSES,), "Finance checks the claim within 5"),
        ("When will I be reimbursed?", (EXPENSES,), "Finance checks the claim within 5"),
        ("When do I have to submit my expense claim?", (EXPENSES,), "To get your expenses"),
        # a place the evidence never names is where the rule applies, as in English
        ("Wie viel darf ein Hotel in Singapur kosten?", (EXPENSES,), f"{LAUT}expense"),
        # an action said in other words: "change" and "recover" are what the reset steps do
        ("How do I change my password?", ("kb:password-reset.md#1",), "1. Go to"),
        ("How do I recover my password?", ("kb:password-reset.md#1",), "1. Go to"),
        ("How do I log in to the VPN?", ("kb:vpn.md#2",), "1. Open the"),
        ("How do I apply for parental leave?", ("kb:leave.md#3",), "Parents get 16 weeks"),
        # a thing no sentence names but one says in other words ("business meals", "laptop")
        ("How do I claim a business dinner?", (EXPENSES,), "Meals: a daily allowance"),
        ("How do I report a broken notebook?", ("kb:laptops.md#2",), "Report a broken laptop"),
    ],
)
def test_the_questions_those_chunks_answer_are_still_answered(
    served: GroundedResponder,
    corpus: KnowledgeBase,
    question: str,
    sources: tuple[str, ...],
    start: str,
) -> None:
    assert reply(served, corpus, question, *sources).startswith(start)


def test_a_derived_form_adds_an_ending_not_another_word() -> None:
    assert derived_in("taxi", frozenset({"taxis"}))
    assert derived_in("reimbursement", frozenset({"reimburs"}))
    assert derived_in("sickness", frozenset({"sick"}))
    assert not derived_in("signature", frozenset({"sign"}))
    assert not derived_in("timetable", frozenset({"time"}))
    assert not derived_in("visitenkarten", frozenset({"visit"}))


def test_a_phone_asks_for_a_number_to_call() -> None:
    assert "phone" in answer_types("What is the Berlin office's phone number?")
    assert "contact" not in answer_types("What is the Berlin office's phone number?")
    assert has_type("call the helpdesk at extension 4357 or +1 555 0100 4357", ("phone",))
    assert not has_type("approved by your manager", ("phone",))


def test_a_sentence_sharing_only_the_question_s_names_is_not_on_its_topic() -> None:
    sentences = extract_knowledge(
        [
            {
                "role": "system",
                "content": "[source: kb:a#1] Add a short purpose (Customer visit to Acme Ltd, "
                "Berlin). This policy covers home-office equipment.",
            }
        ]
    )
    visit, policy = score("What is the Berlin office's phone number?", sentences)
    assert not visit.topical and policy.topical
    (alone,) = score("Berlin?", sentences[:1])
    assert alone.topical  # a question of nothing but the name


def test_an_instruction_for_something_else_is_no_answer_type() -> None:
    sentences = extract_knowledge(
        [
            {
                "role": "system",
                "content": "[source: kb:a#1] Attach every receipt. A card slip is "
                "not a receipt.\n\nOrder business cards in the print shop.",
            }
        ]
    )
    question = "How do I order new business cards?"
    untyped = score(question, sentences, instruction=lambda s: "order" in s.tokens)
    assert [s.typed for s in untyped] == [False, False, True]
    assert [s.typed for s in score(question, sentences)] == [True, False, True]


def test_a_name_no_sentence_holds_is_not_answered_by_the_exchange_before_either(
    served: GroundedResponder, corpus: KnowledgeBase
) -> None:
    vpn = corpus.chunk("kb:vpn.md#2")
    context = {"role": "system", "content": f"[source: kb:vpn.md#2] {vpn.text}"}
    asked = {"role": "user", "content": "How do I connect to the VPN?"}
    answered = {"role": "assistant", "content": "Open the GlobalProtect app."}
    # two words, read with the question before it: "install" met the VPN client's step 1
    zoom = {"role": "user", "content": "How do I install Zoom?"}
    assert served.respond([context, asked, answered, zoom]) == NO_INFORMATION


@pytest.mark.parametrize(
    "question",
    [
        "Wie installiere ich Zoom auf meinem Laptop?",
        "Wie installiere ich Slack?",
        "¿Cómo instalo Zoom en mi portátil?",
    ],
)
def test_a_name_no_sentence_holds_declines_a_question_in_another_language_too(
    served: GroundedResponder, corpus: KnowledgeBase, question: str
) -> None:
    # German writes every noun with a capital, so a capital alone does not make "Zoom" a name;
    # it is one because the question reads closer to the evidence without it
    out = reply(served, corpus, question, "kb:vpn.md#2", "kb:laptops.md#3")
    assert NO_INFORMATION in out, out
