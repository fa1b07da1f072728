"""How the offline responder (:mod:`smartctx.agents.grounded`) words its reply.

:func:`say` turns the chosen evidence into the reply: what the user said of themselves in the
second person (a greeting opening it left out), each document cited after its sentences as
``[source: <id>]`` (never the memory's ids: :func:`~smartctx.agents.knowledge.cited`), the
steps of a procedure numbered, one a line, and, when the evidence is not in the question's
language, a lead-in in that language naming the document quoted
(:data:`~smartctx.agents.language.LEAD_INS`). :func:`noted` acknowledges the facts a user
stated; :func:`greeting_first` parts a greeting from what follows it ("Hi, I'm new here");
:func:`joined` says one answer after another. Pure functions; the cost is linear in the length
of the reply (one language detection of it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from smartctx.agents.knowledge import Sentence, cited
from smartctx.agents.language import LEAD_INS, NOTED, detect_language, small_talk
from smartctx.agents.text import to_second_person
from smartctx.core.sentences import split_sentences

_GREETING = re.compile(
    r"^(?:hi|hello|hey|hallo|hej|bonjour|hola|ciao)(?:\s+there)?\s*[,!.]\s*(?=\S)", re.IGNORECASE
)
"""A greeting opening what the user said ("Hi, my name is Priya"): not part of the fact."""

_NUMBERED = re.compile(r"\d+\. ")
"""A reply that opens with a numbered step (a procedure, see
:func:`~smartctx.agents.procedures.whole_procedures`)."""


def greeting_first(text: str) -> tuple[str | None, str]:
    """The reply to a greeting that opens ``text`` ("Hi, I'm new here") and what follows it, or
    ``(None, text)`` when none does or nothing follows."""
    head, sep, rest = text.strip().partition(",")
    if not sep:
        head, sep, rest = text.strip().partition("!")
    opening = small_talk(head) if sep and rest.strip() else None
    if opening is None:
        return None, text
    # the greeting itself ("Hello!"), not its offer of help: an answer follows
    return split_sentences(opening)[0], rest.strip()


def joined(reply: str, answered: str) -> str:
    """``answered`` said after ``reply``: a numbered procedure starts on its own line, and so
    does what follows one; otherwise a space between them."""
    gap = "\n" if _NUMBERED.match(answered) or "\n" in reply else " "
    return f"{reply}{gap}{answered}"


def whole(statement: str) -> str:
    """``statement`` ending as a sentence does ("I'm going to Berlin" -> "I'm going to
    Berlin.")."""
    return statement if not statement or statement[-1] in ".!?。" else statement + "."


def noted(query: str, facts: Sequence[str]) -> str:
    """The acknowledgement of ``facts``, the statements ``query`` made about the user:
    "Noted: Your employee number is 48213.", in the query's language when
    :data:`~smartctx.agents.language.NOTED` has it ("Notiert: Ich arbeite im Hamburger
    Büro.")."""
    facts = [whole(f) for f in facts]
    lead = NOTED.get(detect_language(query))
    if lead is None:
        return "Noted: " + " ".join(to_second_person(f) for f in facts)
    return " ".join([lead, *(f[:1].upper() + f[1:] for f in facts)])


def say(chosen: Sequence[Sentence], lang: str, *, numbered: bool = False) -> str:
    """``chosen`` as the reply to a question in ``lang``: the user's statements in the second
    person, each document cited after its sentences (:func:`cited`), a lead-in in the
    question's language naming the document when it differs; ``numbered``: the steps of a
    procedure keep their numbers, one step a line ("1. Go to ...")."""
    answer = ""
    for i, sentence in enumerate(chosen):
        text = (
            whole(to_second_person(_GREETING.sub("", sentence.text)))
            if sentence.personal
            else sentence.text
        )
        step = numbered and sentence.step is not None
        if step:
            text = f"{sentence.step}. {text}"
        last_of_source = i + 1 == len(chosen) or chosen[i + 1].source != sentence.source
        if last_of_source and cited(sentence.source):
            text = f"{text} [source: {sentence.source}]"
        after_step = i > 0 and numbered and chosen[i - 1].step is not None
        if answer:
            answer += "\n" if step or after_step else " "
        answer += text
    lead = LEAD_INS.get(lang)
    if lead is not None and cited(chosen[0].source) and detect_language(answer) != lang:
        # names the document quoted; what the user said is said back, no document named
        gap = "\n" if numbered and chosen[0].step is not None else " "
        return f"{lead.format(source=chosen[0].source)}{gap}{answer}"
    return answer
