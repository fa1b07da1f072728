"""Evidence scoring of the offline responder: answer types, entities, list items, languages."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from smartctx.agents import NO_INFORMATION, GroundedResponder
from smartctx.agents.answer_scoring import (
    answer_types,
    derived_in,
    entities,
    gives,
    has_type,
    score,
)
from smartctx.agents.knowledge import extract_knowledge
from smartctx.agents.language import detect_language
from smartctx.core.embeddings import Vector, get_embedder

LIMITS = {
    "role": "system",
    "content": "[source: kb:expense.md#1] This policy covers every business expense, including "
    "travel, hotels and meals. Submit a claim within 30 days.\n\nLimits for travel:\n\n"
    "- Hotels: up to USD 180 per night (USD 250 in London and Tokyo).\n"
    "- Meals: a daily allowance of USD 60 while travelling.\n"
    "- Taxis: allowed when public transport is not practical, or after 22:00.",
}
PASSWORDS = {
    "role": "system",
    "content": "[source: kb:password.md#2] Passwords must have at least 14 characters and must "
    "not contain your name. A passphrase of four unrelated words is recommended. Passwords "
    "expire every 365 days.",
}
STEPS = {
    "role": "system",
    "content": "[source: kb:vpn.md#2] 1. Open the GlobalProtect app from the system tray.\n"
    "2. Approve the push notification in the Authenticator app. The prompt expires after 60 "
    "seconds; if it does, click Connect again.",
}


def ask(question: str, *context: dict[str, str], **options: object) -> str:
    messages = [*context, {"role": "user", "content": question}]
    return GroundedResponder(**options).respond(messages)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def served() -> GroundedResponder:
    """The responder the server uses: USE multilingual with the calibrated options."""
    return GroundedResponder.calibrated(get_embedder("use"))


def answer(responder: GroundedResponder, question: str, *context: dict[str, str]) -> str:
    return responder.respond([*context, {"role": "user", "content": question}])


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How long must a new password be?", "size"),
        ("Wie lang muss ein neues Passwort sein?", "size"),
        ("How long does delivery take?", "length"),
        ("Wie lange dauert die Lieferung?", "length"),
        ("What is the hotel limit for business trips?", "amount"),
        ("¿Cuál es el límite de hotel en Londres?", "amount"),
        ("Do I need a receipt for a 20 dollar lunch?", "amount"),
        ("Who has to approve a claim over 1000 dollars?", "amount"),
        ("How many vacation days do I get?", "count"),
        ("Wie viele Urlaubstage habe ich?", "count"),
        ("비밀번호는 몇 자 이상이어야 하나요?", "count"),
        ("Where is the IT desk?", "place"),
        ("Who do I contact about my claim?", "contact"),
        ("How do I set up the VPN?", "steps"),
    ],
)
def test_a_question_says_what_kind_of_answer_it_wants(question: str, expected: str) -> None:
    assert expected in answer_types(question)


def test_yes_no_questions_ask_for_no_type_and_types_are_found_in_text() -> None:
    assert answer_types("Is alcohol reimbursed?") == ()
    assert has_type("Passwords must have at least 14 characters", ("length",))
    assert has_type("Hotels: up to USD 180 per night", ("amount",))
    assert not has_type("Passwords are personal", ("length", "amount"))


def test_entities_are_names_acronyms_and_numbers_not_sentence_starts() -> None:
    assert entities("What's the hotel limit in London for 2 nights?") == {"london", "2"}
    assert "vpn" in entities("Can the VPN block me?")


def test_the_limit_is_answered_from_the_list_item(served: GroundedResponder) -> None:
    reply = answer(served, "What is the hotel limit for business trips?", LIMITS)
    assert "USD 180" in reply and reply.endswith("[source: kb:expense.md#1]")


def test_a_plural_in_the_evidence_matches_the_singular_question(
    served: GroundedResponder,
) -> None:
    assert "22:00" in answer(served, "Can I expense a taxi?", LIMITS)


def test_the_answer_type_finds_the_number_the_question_asks_for(
    served: GroundedResponder,
) -> None:
    assert "14 characters" in answer(served, "How long must a new password be?", PASSWORDS)


def test_a_question_in_another_language_still_finds_the_number_it_asks_for(
    served: GroundedResponder,
) -> None:
    # no word is shared: similarity alone ranks, and "Passwords expire every 365 days" is the
    # closer sentence; the answer type (a length, not a duration) picks the right one
    rules = {
        "role": "system",
        "content": "[source: kb:password-reset.md#2] Passwords must have at least 14 characters "
        "and must not contain your name or user name. Passwords expire every 365 days; you get "
        "a reminder e-mail 14 days before. The last 10 passwords cannot be reused.",
    }
    reply = answer(served, "Wie lang muss ein neues Passwort sein?", rules)
    assert "14 characters" in reply and "365" not in reply


def test_a_list_item_answers_as_one_unit(served: GroundedResponder) -> None:
    assert "60 seconds" in answer(served, "How long does the push notification last?", STEPS)


def test_no_evidence_means_an_honest_abstention(served: GroundedResponder) -> None:
    reply = answer(served, "Can I bring my dog to work?", LIMITS, PASSWORDS)
    assert reply == NO_INFORMATION
    assert ask("Can I bring my dog to work?", LIMITS, PASSWORDS) == NO_INFORMATION


class KeywordEmbedder:
    """A test double standing in for a multilingual embedder: a text's vector is the set of
    concepts its words name, whatever the language."""

    name = "keywords"
    CONCEPTS: ClassVar[dict[str, int]] = {
        "password": 0,
        "passwords": 0,
        "passwort": 0,
        "비밀번호는": 0,
        "characters": 1,
        "lange": 1,
        "자": 1,
        "hotel": 2,
        "hotels": 2,
    }

    def embed(self, texts: Sequence[str]) -> Vector:
        out = np.full((len(texts), 4), 0.05, dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.casefold().replace("?", " ").replace(".", " ").split():
                if word in self.CONCEPTS:
                    out[row, self.CONCEPTS[word]] = 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.mark.parametrize(
    ("question", "lead"),
    [
        ("Wie lange muss ein Passwort sein?", "Laut"),
        ("비밀번호는 몇 자 이상이어야 하나요?", "따르면"),
    ],
)
def test_a_question_in_another_language_quotes_the_evidence_with_a_lead_in(
    question: str, lead: str
) -> None:
    answer = ask(
        question, PASSWORDS, embedder=KeywordEmbedder(), strong_similarity=0.6, threshold=0.26
    )
    assert lead in answer and "14 characters" in answer
    assert "[source: kb:password.md#2]" in answer


def test_an_abstention_in_another_language_keeps_the_english_marker() -> None:
    answer = ask("Wie wird das Wetter morgen?", PASSWORDS)
    assert answer.endswith(f"({NO_INFORMATION})") and answer.startswith("Dazu")


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("How many vacation days do I get?", "en"),
        ("Book a meeting room", "en"),
        ("Wie viele Urlaubstage habe ich?", "de"),
        ("¿Cuántos días de vacaciones tengo?", "es"),
        ("Combien de jours de congé ai-je ?", "fr"),
        ("연차 휴가는 며칠인가요?", "ko"),
    ],
)
def test_language_detection(text: str, lang: str) -> None:
    assert detect_language(text) == lang


def test_in_a_long_thread_this_turns_documents_answer_first() -> None:
    old = {
        "role": "system",
        "content": "[source: kb:password.md#2] Passwords expire every 365 days.",
    }
    leave = {
        "role": "system",
        "content": "[source: kb:leave.md#1] Employees have 25 days of leave.",
    }
    log = {
        "role": "system",
        "content": "[tool: kb.search] kb.search('How many leave days?') -> kb:leave.md#1",
    }
    reply = ask("How many leave days?", old, leave, log)
    assert "25 days" in reply and "365" not in reply


LEAVE = {
    "role": "system",
    "content": "[source: kb:leave.md#1] Full-time employees have 25 days of paid annual leave "
    "per calendar year, plus public holidays of their country.",
}
EXPENSES = {
    "role": "system",
    "content": "[source: kb:expense.md#1] To get your expenses reimbursed, submit a claim in "
    "the finance portal within 30 days of the expense.",
}


def test_a_word_any_question_is_phrased_with_does_not_pick_the_topic(
    served: GroundedResponder,
) -> None:
    # "get" is the only rare word the expense sentence shares with the question; before it
    # weighed a quarter, that sentence led the answer about vacation days
    reply = answer(served, "How many vacation days do I get?", EXPENSES, LEAVE)
    assert reply.startswith("Full-time employees have 25 days")


def test_a_second_sentence_from_another_document_must_be_about_the_same_thing(
    served: GroundedResponder,
) -> None:
    reply = answer(served, "How many vacation days do I get?", EXPENSES, LEAVE)
    assert "kb:expense.md" not in reply  # shares "days" and a number, not the topic
    same_document = answer(served, "How long must a new password be?", PASSWORDS)
    assert "14 characters" in same_document


def test_what_the_user_said_of_themselves_is_not_mixed_with_policy(
    served: GroundedResponder,
) -> None:
    guide = {
        "role": "system",
        "content": "[source: kb:laptops.md#1] Employees choose a 14-inch Dell Latitude or a "
        "MacBook Pro. Laptops are replaced every 4 years, or earlier when they fail.",
    }
    thread = [
        guide,
        {"role": "user", "content": "My laptop is a ThinkPad X1 and I work in Berlin."},
        {"role": "assistant", "content": "Noted."},
    ]
    mine = answer(served, "What laptop do I have?", *thread)
    assert "ThinkPad X1" in mine and "kb:laptops.md" not in mine
    policy = answer(served, "How often are laptops replaced?", *thread)
    assert "every 4 years" in policy


def test_a_problem_told_as_a_statement_is_answered_when_something_answers_it(
    served: GroundedResponder,
) -> None:
    reset = {
        "role": "system",
        "content": "[source: kb:password-reset.md#1] If you forgot your password, go to "
        "password.example.com and click Forgot password. After 10 failed sign-in attempts your "
        "account is locked for 15 minutes.",
    }
    reply = answer(served, "I forgot my password and I'm locked out", reset)
    assert "password.example.com" in reply and not reply.startswith("Noted")
    # a problem nothing answers is still acknowledged; a plain fact is noted as before
    assert answer(served, "My umbrella is broken", reset).startswith("Noted")
    assert answer(served, "My desk is in room 4B", reset).startswith("Noted")


def test_a_question_sharing_one_word_with_a_policy_it_is_not_about_is_not_answered(
    served: GroundedResponder,
) -> None:
    # "laptop" is shared, "abroad" is in no sentence: the replacement policy is not the answer
    laptops = {
        "role": "system",
        "content": "[source: kb:laptops.md#1] Employees choose a 14-inch Dell Latitude (Windows "
        "11) or a 14-inch MacBook Pro (macOS); engineers may choose 32 GB of memory. Laptops are "
        "replaced every 4 years, or earlier when they fail. Order a laptop or a replacement in "
        'the IT service portal (`it.example.com`, form "Hardware request"); delivery takes about '
        "5 working days.\n[source: kb:laptops.md#2] Report a broken laptop in the IT service "
        "portal; the helpdesk gives you a loan laptop the same day if you come to the IT desk "
        "(floor 2, 8:30-17:30). Report a lost or stolen laptop within 24 hours to "
        "helpdesk@example.com and security@example.com so the device can be locked and wiped "
        "remotely; a police report is needed for stolen devices.",
    }
    assert answer(served, "Can I take my laptop abroad?", laptops) == NO_INFORMATION
    assert "4 years" in answer(served, "How often are laptops replaced?", laptops)
    assert "24 hours" in answer(served, "My laptop was stolen, what do I do?", laptops)


def test_a_shared_name_alone_does_not_make_a_sentence_an_answer(served: GroundedResponder) -> None:
    """A name the question shares tells apart sentences on its topic; a sentence that shares
    only the name got the name's bonus too, and the hotel limits (which list Tokyo) answered a
    question about flights (found by using the product)."""
    travel = {
        "role": "system",
        "content": "[source: kb:expense.md#1] This policy covers every business expense you "
        "pay yourself, including travel, hotels and meals.\n\nLimits for travel:\n\n"
        "- Flights: economy class for flights under 6 hours; premium economy for longer "
        "flights. Trains: second class; first class for journeys over 3 hours.\n"
        "- Hotels: up to USD 180 per night (USD 250 in London, New York, Tokyo and Zurich).\n"
        "- Meals: a daily allowance of USD 60 while travelling.",
    }
    reply = answer(served, "Can I fly business class to Tokyo?", travel)
    assert "economy class" in reply and "Hotels" not in reply
    assert "USD 250" in answer(served, "What is the hotel limit in Tokyo?", travel)
    vpn = {
        "role": "system",
        "content": "[source: kb:password.md#1] Go to password.example.com from any browser "
        "(it works without the VPN).\n\n[source: kb:vpn.md#3] Every employee gets VPN access "
        "on their first day.",
    }
    reply = answer(served, "Does the password reset site need the VPN?", vpn)
    assert "without the VPN" in reply and "first day" not in reply


def test_a_how_to_question_in_another_language_gets_the_whole_procedure(
    served: GroundedResponder,
) -> None:
    reset = {
        "role": "system",
        "content": "[source: kb:password-reset.md#1] ## Resetting a forgotten password\n\n"
        "1. Go to `password.example.com` from any browser.\n"
        "2. Enter your company e-mail address and click **Forgot password**.\n"
        "3. Confirm your identity with the Authenticator app.\n"
        "4. Choose a new password and sign in again on every device.",
    }
    out = answer(served, "Wie setze ich mein Passwort zurück?", reset)
    lead, *steps = out.split("\n")
    assert lead.startswith("Laut kb:password-reset.md#1")
    assert [step[:3] for step in steps] == ["1. ", "2. ", "3. ", "4. "]


def shipped(name: str) -> str:
    """A document of the shipped knowledge base."""
    import smartctx

    return (Path(smartctx.__file__).parent / "data/kb" / name).read_text("utf-8")


def password_chunks() -> list[dict[str, str]]:
    """The password document as a search brings it: its steps (#1) and its rules (#2)."""
    steps, rules = shipped("password-reset.md").split("## Password rules")
    return [
        {"role": "system", "content": f"[source: kb:password-reset.md#1] {steps}"},
        {"role": "system", "content": f"[source: kb:password-reset.md#2] ## Password rules{rules}"},
    ]


def test_beside_a_sentence_holding_the_value_asked_for_one_holding_none_is_left_out(
    served: GroundedResponder,
) -> None:
    doc = shipped("expense-reimbursement.md")
    section = doc[: doc.index("## Non-reimbursable")]  # the chunk a search brings: kb:...#1
    policy = {"role": "system", "content": f"[source: kb:expense-reimbursement.md#1] {section}"}
    out = answer(served, "What is the meal allowance when travelling?", policy)
    # not "This policy covers every business expense ..., meals with customers ..." first
    assert out.startswith("Meals: a daily allowance of USD 60 while travelling")


def test_a_second_sentence_without_the_value_asked_for_is_not_said(
    served: GroundedResponder,
) -> None:
    context = password_chunks()
    out = answer(served, "How long must a new password be?", *context)
    # "Choose a new password and sign in again ..." shares words but holds no length
    assert out.startswith("Passwords must have at least 14 characters")
    assert "Choose a new password" not in out


def test_a_foreign_how_to_whose_best_sentence_is_no_step_opens_its_best_step(
    served: GroundedResponder,
) -> None:
    context = password_chunks()
    out = answer(served, "Comment réinitialiser mon mot de passe ?", *context)
    numbered = [line[:3] for line in out.split("\n") if line[:1].isdigit()]
    assert numbered == ["1. ", "2. ", "3. ", "4. "]
    # the procedure asked for comes first, a rule ranked above its steps after it
    rule = out.find("cannot be reused")
    assert rule == -1 or out.index("1. ") < rule


def test_a_word_met_only_in_the_context_leaves_the_question_to_similarity(
    served: GroundedResponder,
) -> None:
    # "limite" meets only the list's lead-in "Limits for travel:", the context of every item:
    # that is no shared word, so the hotel limit is still found by meaning
    travel = {
        "role": "system",
        "content": "[source: kb:expense.md#1] Limits for travel:\n\n"
        "- Flights: economy class for flights under 6 hours.\n"
        "- Hotels: up to USD 180 per night (USD 250 in London, New York, Tokyo and Zurich).\n"
        "- Meals: a daily allowance of USD 60 while travelling.",
    }
    reply = answer(served, "Quelle est la limite d'hôtel à Londres ?", travel)
    assert "USD 250" in reply and "Flights" not in reply


def travel_policy() -> dict[str, str]:
    """The expense policy's first section as a search brings it (kb:expense-reimbursement.md#1)."""
    doc = shipped("expense-reimbursement.md")
    section = doc[: doc.index("## Non-reimbursable")]
    return {"role": "system", "content": f"[source: kb:expense-reimbursement.md#1] {section}"}


@pytest.mark.parametrize(
    ("question", "start"),
    [
        ("Can I fly business class to Singapore?", "Flights: economy class"),
        ("What is the hotel limit in Singapore?", "Hotels: up to USD 180 per night"),
        ("What is the hotel limit in London?", "Hotels: up to USD 180 per night"),
    ],
)
def test_a_place_no_sentence_names_is_answered_by_the_rule_stated_in_general(
    served: GroundedResponder, question: str, start: str
) -> None:
    # Singapore, named by no sentence, counted as a missing word of every one: no answer
    assert answer(served, question, travel_policy()).startswith(start)


@pytest.mark.parametrize(
    "question", ["Can I take a taxi at night?", "Can I take a taxi in Paris at night?"]
)
def test_a_second_sentence_of_the_document_must_be_on_the_question_s_topic(
    served: GroundedResponder, question: str
) -> None:
    # the hotel limit shares "night" ("USD 180 per night") but is far from the question's sense
    out = answer(served, question, travel_policy())
    assert out.startswith("Taxis: allowed when public transport is not practical")
    assert "Hotels" not in out


def test_a_per_diem_is_answered_by_the_daily_allowance(served: GroundedResponder) -> None:
    out = answer(served, "What is the per diem?", travel_policy())
    assert out.startswith("Meals: a daily allowance of USD 60 while travelling")


PAYROLL = "Finance checks the claim within 5 working days and pays approved amounts"


def parental_leave() -> dict[str, str]:
    """The leave document's last section as a search brings it (kb:leave.md#3)."""
    doc = shipped("leave.md")
    section = doc[doc.index("## Parental") :]
    return {"role": "system", "content": f"[source: kb:leave.md#3] {section}"}


def test_when_one_is_paid_back_is_the_step_that_pays_not_the_claim_deadline(
    served: GroundedResponder,
) -> None:
    # "within 30 days" is the deadline of an instruction ("submit a claim"), and "claims older
    # than 90 days are not paid" says when one is not paid
    out = answer(served, "When do I get paid back for my expenses?", travel_policy())
    assert out.startswith(PAYROLL) and "30 days" not in out, out
    thread = [
        parental_leave(),
        travel_policy(),
        {"role": "user", "content": "How long does reimbursement take?"},
        {"role": "assistant", "content": "Submit a claim within 30 days of the expense."},
    ]
    # read with the thread's topic, not with "paid parental leave"
    out = answer(served, "And when do I get paid back?", *thread)
    assert out.startswith(PAYROLL) and "parental" not in out and "30 days" not in out, out


def test_a_time_is_given_where_a_sentence_says_what_happens() -> None:
    assert "time" in answer_types("And when do I get paid back?")
    deadline = (
        "To get your expenses reimbursed, submit a claim in the Expenses app within 30 days of "
        "the expense; claims older than 90 days are not paid."
    )
    assert has_type(deadline, ("time",)) and not gives(deadline, ("time",))
    assert gives(PAYROLL + " with the next payroll.", ("time",))
    assert gives("Order a laptop in the portal; delivery takes about 5 working days.", ("time",))
    # "by" names who as often as when
    assert not has_type("equipment approved by your manager", ("time",))
    assert has_type("must be taken by 31 March", ("time",))
    # an irregular past form is a form of its verb
    assert derived_in("paid", frozenset({"pay"})) and derived_in("pay", frozenset({"paid"}))
    assert derived_in("lose", frozenset({"lost", "laptop"}))


@pytest.mark.parametrize(
    ("question", "start"),
    [
        ("¿Puedo pedir el reembolso de un taxi?", "Taxis: allowed when public transport"),
        ("¿Cuál es el límite de hotel en Londres?", "Hotels: up to USD 180 per night"),
        ("¿Cuál es el límite de hotel?", "Hotels: up to USD 180 per night"),
    ],
)
def test_a_word_shared_across_languages_is_not_drowned_by_the_question_s_own_words(
    served: GroundedResponder, question: str, start: str
) -> None:
    # "taxi" and "hotel" are the words the Spanish question shares with the English policy; its
    # Spanish words, which no English sentence could hold, had weighed as rare words every
    # sentence lacks, so the shared one counted for a tenth of the question
    out = answer(served, question, travel_policy())
    assert out.startswith(f"Según kb:expense-reimbursement.md#1 (en inglés): {start}"), out


@pytest.mark.parametrize(
    "question", ["¿Puedo traer mi perro al hotel?", "¿Puedo volar en clase business?"]
)
def test_a_word_shared_across_languages_does_not_answer_alone(
    served: GroundedResponder, question: str
) -> None:
    # "hotel" and "business" are shared, but the policy sentences that hold them are about
    # something else
    assert NO_INFORMATION in answer(served, question, travel_policy())


def test_a_foreign_word_no_sentence_holds_weighs_as_a_word_every_sentence_holds() -> None:
    sentences = extract_knowledge([LIMITS])
    taxi = next(n for n, s in enumerate(sentences) if "Taxis" in s.text)
    question = "¿Puedo pedir el reembolso de un taxi?"
    alone = score(question, sentences)[taxi].lexical
    across = score(question, sentences, foreign=True)[taxi].lexical
    # the six Spanish words no sentence holds weigh the least a word can (1, as one every
    # sentence holds tells none apart), not the most (as a rare word the sentences lack)
    assert across > 2 * alone


def test_a_sum_the_question_names_is_answered_by_the_rule_that_sets_one(
    served: GroundedResponder,
) -> None:
    # a yes/no question; the receipt rule shares only "receipt" with it (score 0.25, under the
    # threshold) and holds the sum it is weighed against
    out = answer(served, "Do I need a receipt for a 20 dollar lunch?", travel_policy())
    assert out.startswith("Attach a photo or PDF of every itemized receipt over USD 25"), out
