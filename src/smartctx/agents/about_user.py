"""Answering a question about the user from what they stated of themselves, for the offline
responder (:mod:`smartctx.agents.grounded`).

"What do you know about me?" (:data:`~smartctx.agents.relevance.ABOUT_USER_QUESTION`) is
answered by :func:`about_user`: the user's own statements in the prompt, each once, who they are
first, at most :data:`ABOUT_USER_MAX`. A question of one fact ("Where do I work?", "Which
department am I in?", :func:`~smartctx.agents.relevance.asks_user_fact`) is answered by
:func:`user_fact`: the one statement that bears on it, by its words, a place for "where" or what
they said of their work for a question of their team or department. Never a document's sentence:
only sentences marked ``personal`` (see :class:`~smartctx.agents.knowledge.Sentence`) answer.
Pure functions over the prompt's sentences; the cost is linear in their number (and one ranking
of the user's statements for a question of one fact).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from smartctx.agents.answer_scoring import answer_types, has_type
from smartctx.agents.knowledge import Sentence
from smartctx.agents.language import small_talk

ABOUT_USER_MAX = 5
"""Statements said back at most to "What do you know about me?"."""
_WORK_ASKED = re.compile(
    r"\b(?:team|department|company|employer|workplace|job|role|abteilung|firma|equipo"
    r"|departamento|empresa|équipe|entreprise)\b",
    re.IGNORECASE,
)
"""A question of the user's work (in their words: team, department...), see ``_WORK_STATED``."""
_WORK_STATED = re.compile(r"\b(?:work|working|arbeite|trabajo|travaille)\b", re.IGNORECASE)
"""A statement of where the user works ("I work in finance", "ich arbeite bei ...")."""
_PLACE_NAMED = re.compile(
    r"\b(?i:in|from|at|near|aus|bei|en|de|à|au)\s+(?i:the\s+|der\s+|dem\s+|la\s+|el\s+|le\s+)?"
    r"[A-ZÀ-ÖØ-Þ][\w-]+"
)
"""A place a user's statement names: a preposition and a name ("in Berlin", "aus Hamburg", "en
Madrid"); with the helpdesk places of ``answer_scoring`` (an office, a floor) it answers "Where
am I based?"."""
_NAME = re.compile(r"^my name is\b", re.IGNORECASE)


def about_user(sentences: Sequence[Sentence]) -> list[tuple[Sentence, float, float]]:
    """What the user stated of themselves, each once (the latest wording), in prompt order
    but who they are first (their introduction, else "My name is ..."); at most
    :data:`ABOUT_USER_MAX`, each with a score and similarity of 1."""
    latest: dict[str, Sentence] = {}
    for sentence in sentences:
        if sentence.personal and not small_talk(sentence.text):  # "Hello!" states nothing
            key = " ".join(sorted(sentence.tokens))
            latest.pop(key, None)
            latest[key] = sentence
    said = sorted(latest.values(), key=lambda s: s.order)
    named = next((s for s in said if _NAME.match(s.text)), None)
    if named is not None:
        # "My name is Tomás." is left out when the introduction itself is said ("You're
        # Tomás and you work in the Berlin office."); either comes first
        name = _NAME.sub("", named.text).strip(" .")
        intro = next((s for s in said if s is not named and name and name in s.text), None)
        said.remove(named)
        if intro is not None:
            said.remove(intro)
        said.insert(0, intro or named)
    return [(s, 1.0, 1.0) for s in said[:ABOUT_USER_MAX]]


def user_fact(
    query: str,
    stated: Sequence[Sentence],
    ranked: Callable[[str, Sequence[Sentence]], list[tuple[Sentence, float, float]]],
) -> list[tuple[Sentence, float, float]]:
    """The one statement of ``stated`` (what :func:`about_user` found) that answers a question
    of one fact, or none: the best that ``ranked`` (the responder's ranking) finds for
    ``query``; else, for "where", the first naming a place ("from the Munich office", "in
    Berlin"); else, for a question of their work ("Which department am I in?" after "I work in
    finance"), the first saying where they work. "Who do I report to?" after an introduction
    that names no one is not answered with the introduction."""
    found = ranked(query, stated)[:1]
    if not found and "place" in answer_types(query):
        found = [
            (s, 1.0, 1.0)
            for s in stated
            if has_type(s.text, ("place",)) or _PLACE_NAMED.search(s.text)
        ][:1]
    if not found and _WORK_ASKED.search(query):
        # where they work is what they said of their work, whatever word the question uses
        found = [(s, 1.0, 1.0) for s in stated if _WORK_STATED.search(s.text)][:1]
    return found
