"""Procedures in the evidence: which instruction is on a question's topic, and a numbered list
said whole.

The offline responder (:mod:`smartctx.agents.grounded`) answers "How do I ...?" with the steps
of an ordered list in its prompt. :func:`on_topic` says whether a sentence (with its list's
lead-in) is plainly about what the question asks, so an instruction for another task gets no
credit as an answer ("Attach a photo of every receipt" for "How do I order business cards?");
:func:`whole_procedures` brings every step of a list a chosen step opens. Pure functions over
the prompt's sentences; the cost is linear in their number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from smartctx.agents.answer_scoring import derived_in
from smartctx.agents.knowledge import Sentence
from smartctx.retrieval.analysis import analyze

MAX_STEPS = 8
"""The longest procedure said whole; a longer list answers with its best steps only."""


def _lead_in(step: Sentence, at: dict[int, Sentence]) -> Sentence | None:
    """The lead-in of the ordered list ``step`` belongs to (a sentence of its source ending with
    a colon just before step 1: "Resetting a forgotten password:"), if any; ``at`` maps the
    prompt's sentences by order."""
    first = step
    while first.step is not None and first.step > 1:
        before = at.get(first.order - 1)
        if before is None or before.source != step.source or before.step != first.step - 1:
            return None
        first = before
    lead = at.get(first.order - 1)
    if first.step != 1 or lead is None or lead.source != step.source:
        return None
    return lead if lead.text.endswith(":") else None


def _task_words(
    step: Sentence, section: Sequence[Sentence], lead: Sentence | None
) -> frozenset[str]:
    """The words that say what the procedure ``step`` belongs to is for: its lead-in, its
    section's heading (the section's words no sentence of it holds) and the other sentences of
    its ``section`` (the sentences of its source), not the step itself ("Connecting to the VPN",
    not "On a new laptop it is already installed" in its first step)."""
    held = frozenset().union(*(s.tokens for s in section))
    other = frozenset().union(*(s.tokens for s in section if s is not step))
    heading = step.context_tokens - held
    return other | heading | (lead.tokens if lead is not None else frozenset())


def on_topic(
    topic: Sequence[str], sentences: Sequence[Sentence], action: str | None = None
) -> Callable[[Sentence], bool]:
    """Whether a sentence of ``sentences`` is plainly on a question's ``topic`` (its topic
    words): it holds, with its list's lead-in (:func:`_lead_in`), two of those the sentences know
    at all, or the one they know; any sentence is when they know none (a question in another
    language). So "How do I set up the VPN on my phone?" is not on the topic of a password-reset
    step that mentions a phone, and "How do I order new business cards?" not on that of "Attach
    a photo of every receipt" that mentions a card slip. With the question's ``action`` (its
    task verb, :func:`~smartctx.agents.questions.asked_action`), a step of a list is on its topic
    only when what says the task of its list (:func:`_task_words`: its lead-in, its heading, the
    rest of its section) holds that verb, where any sentence does: "How do I order a new
    laptop?" is not on the topic of the VPN steps whose first says "On a new laptop it is
    already installed", nor is "How do I install software?"; "Order a laptop ... in the IT
    service portal" and "Install software only from the Software Center" answer. Likewise a
    step is on the topic only when its list's task holds one of the topic words: "My laptop
    screen is flickering, what should I do?" is not on the topic of the VPN steps, whose first
    mentions a new laptop."""
    known = frozenset().union(*(s.tokens for s in sentences))
    asked = [t for t in dict.fromkeys(topic) if t in known or derived_in(t, known)]
    need = min(2, len(asked))
    at = {s.order: s for s in sentences}
    verbs = [t for t in analyze(action or "") if t in known or derived_in(t, known)]
    sections: dict[str, list[Sentence]] = {}
    for s in sentences if verbs or asked else ():
        sections.setdefault(s.source, []).append(s)

    def holds(sentence: Sentence) -> bool:
        words = sentence.tokens
        lead = _lead_in(sentence, at) if sentence.step is not None else None
        if lead is not None:
            words = words | lead.tokens
        if sentence.step is not None and (verbs or asked):
            task = _task_words(sentence, sections[sentence.source], lead)
            if verbs and not any(v in task or derived_in(v, task) for v in verbs):
                return False
            if asked and not any(t in task or derived_in(t, task) for t in asked):
                return False  # the topic is only the step's aside, not its list's task
        return sum(1 for t in asked if t in words or derived_in(t, words)) >= need

    return holds


def whole_procedures(
    chosen: Sequence[Sentence],
    sentences: Sequence[Sentence],
    topic: Sequence[str],
    action: str | None = None,
) -> list[Sentence]:
    """``chosen`` with every step of each short ordered list (at most :data:`MAX_STEPS` steps,
    numbered 1, 2, 3 ... in one source) that one of them belongs to, so a procedure is said from
    its first step to its last. ``chosen`` is best first. Only a step plainly on the question's
    ``topic`` (:func:`on_topic`) opens its procedure; when the context knows none of its topic
    words (a question in another language), the best-ranked step alone may open its procedure.
    What the user said is never expanded; a list whose numbering is broken (a step missing from
    ``sentences``) is left as chosen; steps of a procedure not opened are said without their
    numbers."""
    known = frozenset().union(*(s.tokens for s in sentences))
    asked = [t for t in dict.fromkeys(topic) if t in known or derived_in(t, known)]
    plainly = on_topic(topic, sentences, action)
    at = {s.order: s for s in sentences}
    out = list(chosen)
    opened: set[int] = set()
    steps = [s for s in chosen if s.step is not None and not s.personal]
    for sentence in steps:
        if not asked and sentence is not steps[0]:
            # a question whose words the context does not know (another language) opens only
            # the procedure of its best step, chosen by meaning
            continue
        run = [sentence]
        while run[0].step != 1:
            before = at.get(run[0].order - 1)
            if before is None or before.source != sentence.source or before.step is None:
                break
            if before.step != (run[0].step or 0) - 1:
                break
            run.insert(0, before)
        if run[0].step != 1 or not plainly(sentence):
            continue
        broken = False
        while True:
            after = at.get(run[-1].order + 1)
            if after is None or after.source != sentence.source or after.step is None:
                break
            if after.step != (run[-1].step or 0) + 1:
                broken = True  # "1. 2. 4.": a step was lost on the way
                break
            run.append(after)
        if not broken and len(run) <= MAX_STEPS:
            taken = {s.order for s in out}
            out.extend(step for step in run if step.order not in taken)
            opened.update(step.order for step in run)
    return [s if s.step is None or s.order in opened else replace(s, step=None) for s in out]
