"""Reading knowledge back out of an assembled prompt, for the offline responder.

The window renders knowledge as system messages (``smartctx.window.render``):
``[source: <id>] <text>`` for ``rag_doc`` and ``memory`` slots, ``[recalled from: <id>] <text>``
for archived slots brought back, ``[tool: <name>] <text>`` for tool logs, and untagged text for
system slots and summaries. :func:`extract_knowledge` turns that back into scored-ready sentences:

- tagged ``source``/``recalled`` messages: every sentence but questions, cited with the tag's id;
- summaries (``Summary of earlier conversation: ...``, the window's summary slots): their
  statements, cited as ``summary``, an assistant's leading "Noted:" removed;
- other untagged system messages: sentences that are statements rather than instructions,
  cited as ``system`` (the first one) or ``summary`` (later ones);
- earlier user messages of the conversation: the facts the user stated about themselves
  (:func:`~smartctx.agents.facts.extract_facts`), cited as ``conversation``; the last user
  message is the query and is never its own answer;
- tool logs and assistant messages are never knowledge (the model would quote itself).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from smartctx.agents.facts import extract_facts
from smartctx.agents.text import is_question, split_units
from smartctx.retrieval.analysis import analyze
from smartctx.window.summarizer import SUMMARY_PREFIX

_TAG = re.compile(r"^\s*\[(source|recalled from|tool):\s*([^\]]+)\]\s*", re.IGNORECASE)
_INSTRUCTION = re.compile(
    r"^\s*(?:you\s+(?:are|must|should|will|may|can|never|always)|never|always|do\s+not|don['’]t|"
    r"answer|reply|respond|cite|say|use|be|keep|stay|remain|follow|ignore|refuse|avoid|repeat|"
    r"echo|complete|translate|please|tell|show|explain|help|can\s+you|could\s+you|"
    r"if\s+(?:you|the\s+user)|when\s+(?:you|the\s+user)|as\s+an?\s)",
    re.IGNORECASE,
)


# A summary mixes the user's words and the assistant's acknowledgements ("Noted: ...").
# A remembered exchange rendered as "User: ... / Assistant: ...": the user's words are evidence,
# the assistant's own earlier reply is not (quoting it back would cite the model to itself).
_EXCHANGE = re.compile(r"User:\s*(?P<user>.*?)\s*/\s*Assistant:\s*.*?(?=(?:User:|$))", re.DOTALL)
_ACK = re.compile(r"^(?:noted|ok(?:ay)?|thanks?(?:\s+you)?|got\s+it)\s*[:,.!-]\s*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Sentence:
    """One candidate answer sentence.

    ``tokens`` are its analysed words; ``context_tokens`` those of the whole block it came from
    (a heading and its paragraphs), so a sentence in a relevant section scores above a stray one.
    ``personal`` marks text the user said about themselves (memory, conversation), which the
    responder turns to the second person ("my number" -> "your number").
    """

    text: str
    source: str
    tokens: frozenset[str]
    context_tokens: frozenset[str]
    order: int
    personal: bool


def _personal_source(source: str) -> bool:
    return source in ("conversation", "summary") or source.startswith(("mem:", "user:", "pair:"))


def extract_knowledge(messages: Sequence[dict[str, str]]) -> list[Sentence]:
    """Candidate answer sentences in ``messages`` (see the module docstring), in prompt order."""
    last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=-1)
    out: list[Sentence] = []
    seen_system = False
    for index, message in enumerate(messages):
        role, content = message["role"], message["content"]
        statements_only = False
        if role == "system":
            tag = _TAG.match(content)
            if tag is not None:
                if tag.group(1).lower() == "tool":
                    continue
                source, body = tag.group(2).strip(), content[tag.end() :]
                statements_only = tag.group(1).lower() == "recalled from"
            elif content.startswith(SUMMARY_PREFIX):
                source, body = "summary", content[len(SUMMARY_PREFIX) :]
                statements_only = True
            else:
                source, body = ("summary" if seen_system else "system"), content
                seen_system = True
                statements_only = True
        elif role == "user" and index != last_user:
            source, body, statements_only = "conversation", " ".join(extract_facts(content)), True
        else:
            continue
        body = _EXCHANGE.sub(lambda m: m.group("user") + " ", body)
        context = frozenset(analyze(body))
        personal = _personal_source(source)
        for raw in split_units(body):
            sentence = _ACK.sub("", raw) if source == "summary" else raw
            if is_question(sentence) or (statements_only and _INSTRUCTION.match(sentence)):
                continue
            tokens = frozenset(analyze(sentence))
            if tokens:
                out.append(Sentence(sentence, source, tokens, context, len(out), personal))
    return out
