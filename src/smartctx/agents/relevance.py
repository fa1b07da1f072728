"""Is a remembered item relevant to the current request? One hybrid score, one threshold.

Memory earns its place in a prompt only when it bears on what is asked now. :class:`RelevanceGate`
scores remembered texts (pairs, summaries, profile items, long-term items) against the request:

- lexical: the share of the request's analysed words one sentence of the item contains (a plural
  or derived form counting, "taxi" meets "taxis"), words weighted by length as a cheap stand-in
  for rarity; one sentence, because a long passage holds most words somewhere;
- similarity: the cosine of the two under the similarity embedder (USE multilingual), so a
  German request meets an English memory;

``score = max(lexical, similarity)`` and an item is relevant at ``threshold`` or above; a user's
message that asks several questions ("Did you ask me anything before? What did I tell you about
my team?") scores as the best of itself and each of its questions (:func:`asked_parts`).
:meth:`select` keeps the relevant items, best first, each once, within a token allowance, so
memory never crowds out the turn's evidence. The threshold is calibrated on the development
split of ``smartctx bench answers`` (see :data:`THRESHOLDS`). Cost: one batch embedding of the
request and the candidates (callers pass a bounded number of candidates).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, TypeVar

import numpy as np

from smartctx.agents.answer_scoring import LIGHT_WORDS, derived_in
from smartctx.agents.facts import name_fact
from smartctx.agents.language import small_talk
from smartctx.core import Embedder
from smartctx.core.recall import Recaller
from smartctx.core.sentences import asked_parts, only_asks, split_sentences
from smartctx.core.slots import Slot, SlotKind
from smartctx.retrieval.analysis import analyze

T = TypeVar("T")

THRESHOLDS: dict[str, float] = {"use-multilingual-v3": 0.55}
"""Relevance threshold per embedder, calibrated on the dev split of ``smartctx bench answers``:
over every pair of dev questions, one about another knowledge chunk than the request reaches
0.55 in 2.3% of pairs (0.5: 4.2%, 0.45: 7.4%), so an unrelated memory rarely costs tokens, while
a rephrasing of the same question (another language included) passes."""
LEXICAL_ONLY = 0.6
"""Threshold without an embedder: most of the request's words must be in the item."""


@lru_cache(maxsize=16_384)
def _terms(text: str) -> tuple[str, ...]:
    """The distinct analysed words of ``text``, in order (cached: recall scores the same
    archived texts turn after turn)."""
    return tuple(dict.fromkeys(analyze(text)))


def topic_words(request: str) -> list[str]:
    """The request's words that name its topic: all but the words a request is phrased with
    (the offline responder's light words: reporting verbs as in "What did I *say* my name
    was?", and "What did I tell you *about* my badge?")."""
    return [t for t in _terms(request) if t not in LIGHT_WORDS]


def _topic_terms(request: str) -> list[str]:
    """The request's words the gate looks for: :func:`topic_words` (all, if it has none)."""
    return topic_words(request) or list(_terms(request))


@lru_cache(maxsize=16_384)
def _sentence_terms(text: str) -> tuple[frozenset[str], ...]:
    """The analysed words of each sentence of ``text`` (cached like :func:`_terms`)."""
    return tuple(frozenset(_terms(s)) for s in split_sentences(text) or [text])


def _sentence_overlap(terms: list[str], text: str) -> float:
    """The best :func:`_overlap` of ``terms`` with one sentence of ``text``: a long passage holds
    many words somewhere ("new" in step 1, "password" in step 3), a relevant one holds the
    request's words together."""
    return max((_overlap(terms, words) for words in _sentence_terms(text)), default=0.0)


def _overlap(terms: list[str], tokens: frozenset[str]) -> float:
    if not terms:
        return 0.0
    total = sum(len(t) for t in terms)
    found = sum(len(t) for t in terms if t in tokens or derived_in(t, tokens))
    return found / total


class RelevanceGate:
    """Keeps remembered items that bear on a request (see the module docstring)."""

    def __init__(self, embedder: Embedder | None = None, *, threshold: float | None = None) -> None:
        self.embedder = embedder
        if threshold is None:
            threshold = (
                THRESHOLDS.get(embedder.name, LEXICAL_ONLY)
                if embedder is not None
                else LEXICAL_ONLY
            )
        self.threshold = threshold

    def scores(
        self,
        request: str,
        texts: Sequence[str],
        *,
        symmetric: bool = False,
        each_question: bool = False,
    ) -> list[float]:
        """The hybrid score of every text against ``request``. ``symmetric`` also counts the
        share of the text's words found in the request (for short items such as a profile value:
        "안방" bears on "안방 청정 시작해줘"); ``each_question``: a request that asks several
        questions (a user's message) scores as the best of itself and each of them."""
        if not texts:
            return []
        parts = asked_parts(request) if each_question else []
        requests = [request, *parts] if len(parts) > 1 else [request]
        best = [0.0] * len(texts)
        for part in requests:
            terms = _topic_terms(part)
            asked = frozenset(terms)
            lexical = [_sentence_overlap(terms, t) for t in texts]
            if symmetric:
                lexical = [
                    max(lex, _overlap(list(_terms(t)), asked))
                    for lex, t in zip(lexical, texts, strict=True)
                ]
            best = [max(b, lex) for b, lex in zip(best, lexical, strict=True)]
        if self.embedder is None:
            return best
        vectors = np.asarray(self.embedder.embed([*requests, *texts]), dtype=np.float32)
        cosines = (vectors[len(requests) :] @ vectors[: len(requests)].T).max(axis=1)
        return [max(lex, float(cos)) for lex, cos in zip(best, cosines, strict=True)]

    def select(
        self,
        request: str,
        items: Sequence[T],
        text: Callable[[T], str],
        *,
        tokens: Callable[[T], int] | None = None,
        allowance: int | None = None,
        symmetric: bool = False,
    ) -> list[tuple[T, float]]:
        """The relevant ``items``, best first, each text once, at most ``allowance`` tokens in
        all (``tokens`` measures one item)."""
        values = self.scores(
            request, [text(i) for i in items], symmetric=symmetric, each_question=True
        )
        scored = sorted(
            zip(items, values, strict=True),
            key=lambda pair: -pair[1],
        )
        out: list[tuple[T, float]] = []
        seen: set[str] = set()
        used = 0
        for item, value in scored:
            key = " ".join(analyze(text(item), stop=False))
            if value < self.threshold or key in seen:
                continue
            cost = tokens(item) if tokens is not None else 0
            if allowance is not None and used + cost > allowance:
                continue
            seen.add(key)
            used += cost
            out.append((item, value))
        return out


ELLIPTICAL_TERMS = 3
"""A request with fewer content words than this names too little to be searched alone."""

FOLLOW_UP_WORDS: frozenset[str] = frozenset(
    analyze(
        "ask contact tell inform notify report call reach email speak talk turn go happen do "
        "done suggest recommend advise please now next then first else instead exactly"
    )
)
"""Words a follow-up asks for help with that name no topic: whom to tell or contact, what to
do now or next ("Who should I contact?", "What do I do now?", "Where do I go?")."""
_ASKS_ASSISTANT = re.compile(r"\b(?:can|could|would|will|do|did)\s+you\b", re.IGNORECASE)
_ASSISTANT = re.compile(r"\byou(?:r|rs|rself)?\b", re.IGNORECASE)


def has_own_topic(text: str) -> bool:
    """Whether ``text`` names what it is about: a word beyond those a request is phrased with
    (:func:`topic_words`) and those a follow-up asks for help with (:data:`FOLLOW_UP_WORDS`),
    or the assistant itself ("How do I contact you?"; "Can you tell me who to contact?" only
    asks it), unless it only goes on with the thread's question (:func:`continues`). A message
    that names nothing ("Who do I tell?", "What should I do now?") is
    about the thread's topic (:func:`thread_topic`)."""
    if continues(text):
        return False
    if any(t not in FOLLOW_UP_WORDS for t in topic_words(text)):
        return True
    return _ASSISTANT.search(_ASKS_ASSISTANT.sub(" ", text)) is not None


_CONTINUES = re.compile(
    r"^\W*(?:and|also|plus|und|auch|y|et)\W+(?:how|when|where|which|who|why|wie|wann|wo|welche"
    r"|c[oó]mo|cu[aá]ndo|d[oó]nde|comment|quand|o[uù])\b",
    re.IGNORECASE,
)


def continues(text: str) -> bool:
    """Whether ``text`` goes on with the thread's question in a few words and names nothing new
    ("And how far in advance?" after "How do I request time off?"): it opens with "and" or
    "also" and a question word other than "what" ("and what about laptops?" and "and for
    laptops?" name a thing of their own), holds fewer than :data:`ELLIPTICAL_TERMS` content
    words (:func:`topic_words`: "And when do I get paid back?" has two) and no name ("and where
    in London?" names a place of its own)."""
    if _CONTINUES.match(text) is None or len(topic_words(text)) >= ELLIPTICAL_TERMS:
        return False
    return not any(word[:1].isupper() and not _I.match(word) for word in text.split()[1:])


_I = re.compile(r"I(?:['’]\w+)?\W*$")
"""The pronoun "I" ("I", "I'm", "I'd"): a capital, but no name ("And when do I get paid
back?")."""


def thread_topic(earlier: Sequence[str]) -> str | None:
    """The latest of the user's ``earlier`` messages (oldest first) that names its topic
    (:func:`has_own_topic`; small talk names none): the statement or question a follow-up that
    names nothing is about, however many such follow-ups came since ("I lost my laptop on the
    train", then "Who do I tell?", then "Who should I contact?"); None when there is none."""
    return next((m for m in reversed(earlier) if has_own_topic(m) and small_talk(m) is None), None)


_IDENTITY = re.compile(
    r"^\W*(?:who\s+am\s+i|do\s+you\s+(?:know|remember)\s+who\s+i\s+am|wer\s+bin\s+ich"
    r"|wei(?:ss|ß)t\s+du,?\s+wer\s+ich\s+bin|qui\s+suis[- ]je|qui[eé]n\s+soy(?:\s+yo)?"
    # the name itself, as people ask it ("What's my name?" analyses to "s" and "name")
    r"|what(?:'s|’s|s|\s+is|\s+was)\s+my\s+name(?:\s+again)?"
    r"|do\s+you\s+(?:know|remember)\s+my\s+name|tell\s+me\s+my\s+name"
    r"|wie\s+hei(?:ss|ß)e\s+ich|comment\s+je\s+m'?\s*appelle|c[oó]mo\s+me\s+llamo)\W*$",
    re.IGNORECASE,
)
_ABOUT_USER = re.compile(
    r"^\W*(?:what\s+do\s+you\s+(?:know|remember)\s+(?:about|of)\s+me"
    r"|tell\s+me\s+(?:what\s+you\s+know\s+)?about\s+(?:me|myself)"
    r"|what\s+(?:have|did)\s+i\s+(?:told|tell)\s+you\s+about\s+(?:me|myself)"
    r"|was\s+wei(?:ss|ß)t\s+du\s+(?:(?:über|ueber)\s+mich|von\s+mir)"
    r"|qu[eé]\s+sabes\s+(?:de|sobre)\s+m[ií])\W*$",
    re.IGNORECASE,
)
_USER_FACT = re.compile(
    r"^\W*(?:(?:where|which)\b[^?]*?\b(?:(?:do|did)\s+i\s+(?:work|live|sit|come\s+from|belong)"
    r"|am\s+i\s+(?:in|at|from|based|located|working|sitting|going|travell?ing|flying|heading))\b"
    r"|who\s+do\s+i\s+(?:report\s+to|work\s+(?:for|with))\b"
    r"|what\s+(?:team|department|office|company|city)\s+(?:am|do)\s+i\b"
    r"|(?:what|which|who)(?:'s|’s|\s+is|\s+was|\s+are)?\s+my\s+(?:job|role|team|department|office"
    r"|desk|title|position|manager|boss|location|city|employer|company|workplace)\b"
    r"|wo\s+(?:arbeite|wohne|sitze)\s+ich|in\s+welche[mr]?\s+(?:team|abteilung|büro)\s+"
    r"(?:bin|arbeite)\s+ich|d[oó]nde\s+(?:trabajo|vivo)|o[uù]\s+(?:est-ce\s+que\s+je\s+"
    r"travaille|je\s+travaille|travaill[eé]-je))",
    re.IGNORECASE,
)
NAME_QUESTION = "What is my name?"
ABOUT_USER_QUESTION = "What do you know about me?"


def asks_about_user(text: str) -> bool:
    """Whether ``text`` asks what is known of the user ("What do you know about me?", "Was
    weißt du über mich?"): everything they stated of themselves answers it."""
    return _ABOUT_USER.match(text) is not None


def asks_user_fact(text: str) -> bool:
    """Whether ``text`` asks for a fact of the user's own life ("Where do I work?", "What's my
    team?", "Wo arbeite ich?"): only what they stated of themselves answers it, never a
    document that shares a word with it ("working days")."""
    return _USER_FACT.match(text) is not None


def query_for(text: str) -> str:
    """What to search for ``text``: "What is my name?" when it asks who the user is ("Who am
    I?", "Wer bin ich?": such a question has no word to search by, and the user's name is what
    it asks), :data:`ABOUT_USER_QUESTION` when it asks what is known of them or a fact of their
    own ("Where do I work?"; the user's own statements answer it, see :class:`GatedRecaller`),
    else ``text`` itself."""
    if _IDENTITY.match(text):
        return NAME_QUESTION
    return ABOUT_USER_QUESTION if asks_about_user(text) or asks_user_fact(text) else text


def contextual_query(text: str, previous: str | None) -> str:
    """What to search for ``text``: itself, or for a follow-up that names too little to find
    anything by itself ("and then?", "und dann?") or names no topic at all ("Who should I
    contact about it now?", :func:`has_own_topic`), the ``previous`` user message (the thread's
    topic, :func:`thread_topic`) followed by ``text``, so the evidence of the exchange it
    follows can come back. A question of who the user is asks for their name alone
    (:func:`query_for`)."""
    if _IDENTITY.match(text) or asks_about_user(text) or asks_user_fact(text):
        return query_for(text)  # about the user, not about the exchange before it
    if previous is None or (len(_terms(text)) >= ELLIPTICAL_TERMS and has_own_topic(text)):
        return text
    return f"{previous}\n{text}"


class GatedRecaller:
    """A :class:`~smartctx.core.recall.Recaller` that passes on only what bears on the query.

    ``inner`` ranks every candidate (hybrid search over the archive; a served window's inner
    recaller scores ahead, off the event loop, over exactly the candidates it is given, so they
    are passed through unfiltered); of its best ``2 * top``, tool logs and user messages that
    only ask are dropped (a tool log records what an earlier turn retrieved and a question
    without its answer tells nothing; the evidence and the answer are candidates themselves),
    the best ``top`` left are scored by ``gate`` (against the query, and against its last line
    alone when :func:`contextual_query` put the previous message before it and that line names
    a topic of its own, :func:`has_own_topic`: a follow-up that names none is judged by the
    thread's topic; the user's message by each of its questions too), and those under the
    gate's threshold are dropped. So an
    archived slot comes back into a prompt only when it is relevant to the request, as memory
    does. A question of what is known of the user (:data:`ABOUT_USER_QUESTION`, see
    :func:`query_for`) gets the user's latest statements instead (messages whose ``stated``
    metadata the agent set). The inner ranking's order and scores are kept; ``inner`` is public
    (a server finds its indexing recaller through it). Cost per call: the inner ranking plus one
    or two batch embeddings of at most ``top`` texts and the request's questions (cached by the
    embedder).
    """

    def __init__(self, inner: Recaller, gate: RelevanceGate, *, top: int = 8) -> None:
        self.inner = inner
        self.gate = gate
        self.top = top

    def rank(self, query: str, candidates: Sequence[Slot], k: int) -> list[tuple[Slot, float]]:
        if k <= 0 or not candidates:
            return []
        if query == ABOUT_USER_QUESTION:
            # what is known of the user is what they stated: their latest statements, newest
            # first (no word of the question would find them)
            stated = [s for s in candidates if s.kind is SlotKind.USER and s.metadata.get("stated")]
            return [(slot, 1.0) for slot in reversed(stated[-min(k, self.top) :])]
        ranked = self.inner.rank(query, candidates, min(k, 2 * self.top))
        kept = [pair for pair in ranked if _informative(pair[0])][: self.top]
        if not kept:
            return []
        # each slot is judged by its text and, for a user's self-introduction, by the fact it
        # states ("Hi, I'm Dana" is "My name is Dana." to "What is my name?")
        owners: list[int] = []
        texts: list[str] = []
        for n, (slot, _) in enumerate(kept):
            for text in _judged_texts(slot):
                owners.append(n)
                texts.append(text)
        current = query.rsplit("\n", 1)[-1]
        searched_with = bool(current.strip()) and current != query
        # the user's message is judged by each of its questions too
        scored = self.gate.scores(query, texts, symmetric=True, each_question=not searched_with)
        if searched_with and has_own_topic(current):
            # a short request searched with the message before it (contextual_query) is judged
            # on its own too: "And my desk?" after "How many vacation days do I get?". One that
            # names nothing ("Who should I contact?") is about the thread's topic only: alone,
            # its phrasing would bring back whatever shares it (a VPN chunk's "contact the
            # helpdesk" after "I lost my laptop on the train")
            alone = self.gate.scores(current, texts, symmetric=True, each_question=True)
            scored = [max(a, b) for a, b in zip(scored, alone, strict=True)]
        values = [0.0] * len(kept)
        for n, value in zip(owners, scored, strict=True):
            values[n] = max(values[n], float(value))
        return [
            pair for pair, value in zip(kept, values, strict=True) if value >= self.gate.threshold
        ]

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (copying): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)


def _judged_texts(slot: Slot) -> list[str]:
    """What the gate reads of ``slot``: its text, and the name a user's message introduces."""
    named = name_fact(slot.text) if slot.kind is SlotKind.USER else None
    return [slot.text] if named is None else [slot.text, named]


def _informative(slot: Slot) -> bool:
    if slot.kind is SlotKind.TOOL_LOG:
        return False
    if slot.kind is SlotKind.USER:
        return not only_asks(slot.text)
    return True
