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
- remembered items (``mem:``, ``pair:``) count only for the facts the user stated in them (a
  remembered complaint or request answers nothing);
- tool logs and assistant messages are never knowledge (the model would quote itself);
- prompt scaffolding ("Current request (required ...", "Memory context (...") and raw JSON are
  never knowledge.

A system message in the chat shape of :mod:`smartctx.window.chat` (rules, then ``## Memory``,
``## Knowledge``... sections) is read item by item, exactly as the one-message-per-slot shape.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from smartctx.agents.facts import (
    extract_facts,
    fact_attribute,
    name_fact,
    restated_later,
    stated_facts,
)
from smartctx.agents.text import numbered_units
from smartctx.core.sentences import is_question
from smartctx.retrieval.analysis import analyze
from smartctx.window.chat import EARLIER_ASSISTANT, EARLIER_USER, HEADINGS
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
    responder turns to the second person ("my number" -> "your number"). ``step`` is its number
    in an ordered list ("2. Enter the portal address ..."), None for any other sentence.
    """

    text: str
    source: str
    tokens: frozenset[str]
    context_tokens: frozenset[str]
    order: int
    personal: bool
    step: int | None = None


def document_of(source: str) -> str:
    """The document a source id names (``kb:vpn.md#2`` -> ``kb:vpn.md``)."""
    return source.partition("#")[0]


def _personal_source(source: str) -> bool:
    return source in ("conversation", "summary") or source.startswith(("mem:", "user:", "pair:"))


_UNCITED = frozenset({"conversation", "summary", "system"})
_MEMORY_IDS = ("mem:", "pair:", "user:", "profile:", "summary:", "memory:", "provider:")
"""The namespaces of the memory's own ids: a long-term item, a remembered exchange, an archived
message without a source id (``<kind>:<id>``), a profile item, a memory summary, a provider's
instructions."""


def cited(source: str) -> bool:
    """Whether a reply names ``source``: a document the user can open (``kb:vpn.md#2``, or the
    source id a caller gave a ``rag_doc``), never what the user told us (the conversation, the
    window's summary of it) or the memory's internal ids (``mem:...``, ``pair:...``; see
    :data:`_MEMORY_IDS`), nor the system prompt. What the user said is said back in the second
    person, which tells whose it is."""
    return source not in _UNCITED and not source.startswith(_MEMORY_IDS)


_SCAFFOLDING = re.compile(
    r"^\s*(?:current\s+request\s*\(|memory\s+context\s*\(|\{|\[\s*\{)|\"[a-z_]+\"\s*:",
    re.IGNORECASE,
)


def _pieces(messages: Sequence[dict[str, str]]) -> list[tuple[str, str, bool]]:
    """``(role, content, is_last_user)`` pieces: a system message shaped by
    :mod:`smartctx.window.chat` is cut at its section headings and tags, so each context item
    is read as if it were its own message; moved conversation keeps its role."""
    last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=-1)
    out: list[tuple[str, str, bool]] = []
    for index, message in enumerate(messages):
        role, content = message["role"], message["content"]
        if role != "system":
            out.append((role, content, index == last_user))
            continue
        current: list[str] = []
        parts: list[str] = []
        for line in content.split("\n"):
            heading = line.strip() in HEADINGS
            if (heading or _PIECE_START.match(line)) and current:
                parts.append("\n".join(current))
                current = []
            if not heading:
                current.append(line)
        if current:
            parts.append("\n".join(current))
        for part in parts:
            if not part.strip():
                continue
            if part.startswith(EARLIER_USER):
                out.append(("earlier", part[len(EARLIER_USER) :].strip(), False))
            elif part.startswith(EARLIER_ASSISTANT):
                out.append(("assistant", part[len(EARLIER_ASSISTANT) :].strip(), False))
            else:
                out.append(("system", part.strip(), False))
    return out


_PIECE_START = re.compile(
    r"^\[(?:source|recalled from|tool):|^\[earlier (?:user message|assistant reply)\]",
    re.IGNORECASE,
)


def extract_knowledge(messages: Sequence[dict[str, str]]) -> list[Sentence]:
    """Candidate answer sentences in ``messages`` (see the module docstring), in prompt order.
    Each piece of the prompt is read once and remembered (bounded): a thread's prompt repeats
    most of its knowledge and instructions from turn to turn."""
    found: list[_Found] = []
    seen_system = False
    for role, content, is_last_user in _pieces(messages):
        untagged = role == "system" and _TAG.match(content) is None
        untagged = untagged and not content.startswith(SUMMARY_PREFIX)
        found += _piece_sentences(role, content, is_last_user, seen_system)
        if untagged and not _SCAFFOLDING.search(content):
            seen_system = True
    return [
        Sentence(text, source, tokens, context, n, personal, step)
        for n, (text, source, tokens, context, personal, step) in enumerate(_current(found))
    ]


def _current(found: list[_Found]) -> list[_Found]:
    """``found`` without what the user stated of an attribute they state again later in the
    prompt (memory comes before the conversation, the conversation in its order): after "My
    manager is Ana Lopez." and "Actually my manager is now Tom Berg.", only the latter answers
    "Who is my manager?" (:func:`~smartctx.agents.facts.restated_later`, as the long-term
    memory supersedes a fact)."""
    stated = [fact_attribute(item[0]) if item[4] else None for item in found]  # [4]: personal
    gone = restated_later([(a[0],) if a is not None else () for a in stated])
    return [item for item, superseded in zip(found, gone, strict=True) if not superseded]


_Found = tuple[str, str, frozenset[str], frozenset[str], bool, int | None]


@lru_cache(maxsize=2048)
def _piece_sentences(
    role: str, content: str, is_last_user: bool, seen_system: bool
) -> tuple[_Found, ...]:
    """The sentences one piece of the prompt offers: (text, source, tokens, section tokens,
    personal, step in an ordered list), in order."""
    statements_only = False
    if _SCAFFOLDING.search(content):
        return ()  # prompt scaffolding or raw JSON is never evidence
    if role == "system":
        tag = _TAG.match(content)
        if tag is not None:
            if tag.group(1).lower() == "tool":
                return ()
            source, body = tag.group(2).strip(), content[tag.end() :]
            statements_only = tag.group(1).lower() == "recalled from"
        elif content.startswith(SUMMARY_PREFIX):
            source, body = "summary", content[len(SUMMARY_PREFIX) :]
            statements_only = True
        else:
            source, body = ("summary" if seen_system else "system"), content
            statements_only = True
    elif role == "user" and not is_last_user:
        source, body, statements_only = "conversation", " ".join(stated_facts(content)), True
    elif role == "earlier":
        # an earlier user message brought back from the archive: its statements count
        named = name_fact(content)
        source, body, statements_only = "conversation", f"{named or ''} {content}".strip(), True
    else:
        return ()
    body = _EXCHANGE.sub(lambda m: m.group("user") + " ", body)
    if source.startswith(("mem:", "pair:")):
        # a remembered self-introduction answers "What is my name?" as the current one does
        named = name_fact(body)
        body = f"{named} {body}" if named else body
    context = frozenset(analyze(body))
    personal = _personal_source(source)
    remembered = source.startswith(("mem:", "pair:"))
    found: list[_Found] = []
    for raw, step in numbered_units(body):
        sentence = _ACK.sub("", raw) if source == "summary" else raw
        if is_question(sentence) or (statements_only and _INSTRUCTION.match(sentence)):
            continue
        if remembered:
            facts = extract_facts(sentence)
            if not facts:
                continue  # a remembered complaint ("my VPN drops") answers nothing
            # what it states, not how it was asked ("I'm allergic to peanuts, remember that")
            sentence = " ".join(facts)
        tokens = frozenset(analyze(sentence))
        if tokens:
            found.append((sentence, source, tokens, context, personal, step))
    return tuple(found)


def user_messages(messages: Sequence[dict[str, str]]) -> list[str]:
    """What the user said in ``messages``, oldest first: their earlier messages the window
    brought back from the archive (``[earlier user message]`` in the system message), then the
    conversation's user messages, the current one last."""
    return [content for role, content, _ in _pieces(messages) if role in ("earlier", "user")]


_SEARCH_LOG = re.compile(
    r"kb\.search\((?P<q>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\) -> (?P<ids>.*)$"
)


def current_retrieval(messages: Sequence[dict[str, str]], query: str) -> set[str] | None:
    """The knowledge sources retrieved for ``query`` this turn, read from the knowledge base's
    tool log (``kb.search('<query>') -> kb:a#1, kb:b#2``), or ``None`` when no log names it.
    In a long thread older documents stay in the window; the current ones answer first."""
    found: set[str] | None = None
    for role, content, _ in _pieces(messages):
        if role != "system":
            continue
        body = content[len("[tool: kb.search]") :].strip() if content.startswith("[tool:") else ""
        match = _SEARCH_LOG.match(body)
        if match is None:
            continue
        shown = match.group("q")[1:-1].rstrip("…")
        if shown and query.strip().startswith(shown.replace("\\'", "'")):
            ids = match.group("ids").strip()
            found = set() if ids == "(no results)" else {i.strip() for i in ids.split(",")}
    return found
