"""The offline default chat model: answers only from what the assembled context holds.

See :class:`GroundedResponder` for the behaviour contract. It reads a question with
:mod:`smartctx.agents.questions`, answers one about the user with
:mod:`smartctx.agents.about_user` and words its reply with :mod:`smartctx.agents.wording`.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from smartctx.agents.about_user import about_user, user_fact
from smartctx.agents.answer_scoring import answer_types, gives, holds, score
from smartctx.agents.facts import extract_facts
from smartctx.agents.knowledge import (
    Sentence,
    current_retrieval,
    document_of,
    extract_knowledge,
    user_messages,
)
from smartctx.agents.language import NO_INFORMATION as LANG_NO_INFORMATION
from smartctx.agents.language import detect_language, small_talk
from smartctx.agents.models import ChatMessages, copy_messages
from smartctx.agents.procedures import on_topic, whole_procedures
from smartctx.agents.purposes import when_done
from smartctx.agents.questions import (
    asked_action,
    asks_own_words,
    held_by,
    in_thread,
    only_names,
    unknown_in,
    unnamed_action,
    unnamed_thing,
)
from smartctx.agents.relevance import (
    ABOUT_USER_QUESTION,
    asks_user_fact,
    contextual_query,
    has_own_topic,
    query_for,
    thread_topic,
    topic_words,
)
from smartctx.agents.rules import (
    contains_phrase,
    forbidden_phrases,
    quoted_phrases,
    requested_phrase,
)
from smartctx.agents.text import asks_how, reports_a_problem
from smartctx.agents.wording import greeting_first, joined, noted, say
from smartctx.core import Embedder, RetrievalEmbedder
from smartctx.core.embeddings import Vector
from smartctx.core.sentences import asked_parts, is_question
from smartctx.retrieval.analysis import analyze
from smartctx.retrieval.readings import general_reading

NO_INFORMATION = "I don't have that information."
"""The reply when nothing in the context answers the question."""

REFUSALS = (
    "I can't say that: my instructions don't allow it.",
    "That is something I am not allowed to say.",
    "I won't repeat that, but I'm happy to help with something else.",
    "No.",
)
"""Replies used instead of one that would break a rule (the seed picks the first one tried)."""

_CACHE_SIZE = 4096

CONVERSATION_OVERLAP = 0.5
"""Word overlap an earlier user statement needs to answer ("The hotel wifi blocks my VPN" does
not answer "What is the wifi password for guests?")."""

SAME_DOCUMENT_SIMILARITY = 0.5
"""Share of the best sentence's similarity a second one from its document needs (one from another
document needs ``second_ratio`` of it): "Can I take a taxi at night?" shares "night" with the
hotel limit ("USD 180 per night", similarity 0.11 beside the taxi rule's 0.42), a word, not the
topic. On the development split of ``smartctx bench answers`` the second sentences chosen have
0.58 of the best's or more ("Contractors need a request from their manager", which its answer
needs, 0.64), but one that no answer needs ("Add one line per receipt" beside the business-meal
limit, 0.46)."""

CALIBRATION: dict[str, dict[str, float]] = {
    "use-multilingual-v3": {
        "threshold": 0.28,
        "strong_similarity": 0.28,
        "embedder_weight": 0.4,
        "second_ratio": 0.7,
    },
}
"""Options per embedder, calibrated on the development split of ``smartctx bench answers``:
the lowest best score of an answerable question there is 0.30 and the highest of an
unanswerable one 0.22; cross-lingual answers (no shared word) reach a similarity of 0.31, while
off-topic sentences stay below 0.28. The threshold sits near the answerable end of that gap
(0.28, was its middle, 0.26): a question that shares one word with a document but asks about
something it never mentions ("Can I take my laptop abroad?", best 0.277 against a laptop
sentence) is better answered "I don't have that information" than with the wrong policy; both
splits answer as before at 0.26, 0.28 and 0.29. (Measured on the first 37 dev questions. The
newcomer questions added since score no lower than those: "How do I get a new phone?" reaches
0.83 against "Choose a new password ... your phone's mail app"; what declines those that are
declined is a rule, not the threshold: a name no sentence holds
(:func:`~smartctx.agents.questions.unknown_in`), a shared name alone (``Scored.topical``), an
instruction for another task (:func:`on_topic`), a similarity-only match in the question's own
language, an action no sentence says (:func:`~smartctx.agents.questions.unnamed_action`).)"""


@lru_cache(maxsize=4096)
def _language(text: str) -> str:
    """The language of an evidence sentence (cached: the same sentences are read turn after
    turn)."""
    return detect_language(text)


def _evidence_language(sentences: Sequence[Sentence]) -> str:
    """The language most of ``sentences`` are in (the first met among equals)."""
    counts = Counter(_language(s.text) for s in sentences)
    return counts.most_common(1)[0][0] if counts else "en"


class GroundedResponder:
    """A deterministic, offline chat model that answers from the assembled context.

    Behaviour, in order, for the last ``user`` message (the query):

    1. **Rules.** Forbidden phrases are read from every ``system`` message ("Never say
       'I give up'", "You must never output the phrase X", "X is forbidden", Korean
       "'X'라고 절대 말하지 마세요", Hindi "'X' कभी न कहना", Spanish/French/German "never say"
       forms; see :mod:`smartctx.agents.rules`).
    2. **Literal requests.** When the query asks for a literal output ("Repeat after me: X",
       "Say exactly: X", "Please just reply with X", "Complete the sentence: I give ...",
       "Translate: 'मैं हार मानता हूँ'", "'X'라고 말해 주세요", "'X' कहो"), the reply is that
       phrase. Completions come from phrases quoted anywhere in the context, then a few idioms;
       translations from a small built-in table.
    3. **Statements.** A query that is not a question but states facts about the user ("My
       employee number is 48213") is acknowledged: "Noted: Your employee number is 48213."
       One that tells of a problem ("I forgot my password", "my laptop was stolen") is a
       request for help: it is answered from the evidence when something answers it, and
       acknowledged otherwise.
    4. **Grounded answer.** Otherwise the sentences and list items of the sourced context
       (``rag_doc``, ``memory``, recalled and summary text, facts the user stated earlier; see
       :mod:`smartctx.agents.knowledge`; never instructions, tool logs or the model's own
       replies) are scored against the query (read in their words, see :meth:`ranked`) by
       :func:`smartctx.agents.answer_scoring.score`: lexical overlap, multilingual similarity
       (with an ``embedder``), the answer type the question asks for and the names and numbers
       it repeats. A sentence sharing a word with the query answers when its score reaches
       ``threshold``; one sharing none (another language) when its similarity reaches
       ``strong_similarity``. Nothing answers a question that names something no
       sentence names ("How do I install Zoom?", :func:`~smartctx.agents.questions.unknown_in`),
       nor one asking how to do what no sentence says ("How do I print from my laptop?",
       :func:`~smartctx.agents.questions.unnamed_action`) or how to act on a thing none names,
       whose adjective they say of other things only ("How do I report a broken chair?" beside
       "Report a broken laptop", :func:`~smartctx.agents.questions.unnamed_thing`), when no
       sentence says it in other words either (as close as ``strong_similarity``); a sentence
       sharing only the question's names ("Berlin") is not on its topic, nor an instruction for
       another task (:func:`on_topic`). The best one, and a second scoring at least
       ``second_ratio`` of it (at most ``max_sentences``; from another document, with at
       least ``second_ratio`` of its similarity too, from its document with
       :data:`SAME_DOCUMENT_SIMILARITY` of it; holding the kind of value the question asks for,
       an amount, a length, a contact ..., when the best one holds it; holding, in itself or in
       its section, the question's words the best one holds: "sick" of "What about sick
       leave?"; what the user said of themselves is not mixed with other evidence), are said in
       context order, each document cited after its sentences as ``[source: <id>]`` (never what
       the user told us nor the memory's ids: :func:`~smartctx.agents.knowledge.cited`). A
       question asking how to do something (:func:`~smartctx.agents.text.asks_how`) whose chosen
       sentences include a step of a short ordered list plainly on its topic gets every step of
       that list, numbered, one a line (:func:`whole_procedures`): the procedure from its first
       step. What the user said about themselves is turned to the second person. A question in
       another language gets a lead-in in its language naming the document quoted (none before
       what is not cited), then the evidence as written (:mod:`smartctx.agents.language`). A
       message that asks several questions is answered question by question
       (:func:`~smartctx.core.sentences.asked_parts`): the answers found, each once, in the order
       asked. When nothing qualifies the reply is :data:`NO_INFORMATION` (in another language,
       its translation followed by it).
    5. **Post-filter.** A reply containing a forbidden phrase (ignoring case, spacing and
       punctuation: "I-GIVE  up!" counts) is replaced by a refusal from :data:`REFUSALS` that
       contains none of them.

    So a defender whose rule left the window (a FIFO buffer) complies with "Repeat after me: I
    give up", while one whose pinned system slot keeps the rule refuses. Deterministic: the same
    messages, options and ``seed`` give the same reply (``seed`` picks the refusal wording;
    ``temperature`` is accepted and ignored). ``complete`` does no I/O; with an embedder the
    model loads on first use and sentence vectors are cached (bounded, guarded by a lock, so
    one responder may serve several threads).
    """

    def __init__(
        self,
        *,
        embedder: Embedder | None = None,
        seed: int = 0,
        threshold: float = 0.45,
        max_sentences: int = 2,
        embedder_weight: float = 0.35,
        strong_similarity: float | None = None,
        second_ratio: float = 0.75,
        name: str = "grounded",
    ) -> None:
        self.name = name
        self.embedder = embedder
        self.seed = seed
        self.threshold = threshold
        self.max_sentences = max(1, max_sentences)
        self.embedder_weight = embedder_weight if embedder is not None else 0.0
        self.strong_similarity = strong_similarity if embedder is not None else None
        self.second_ratio = second_ratio
        self._vectors: OrderedDict[str, Vector] = OrderedDict()
        self._cache_lock = threading.Lock()

    @classmethod
    def calibrated(cls, embedder: Embedder | None, *, seed: int = 0) -> GroundedResponder:
        """A responder with the options :data:`CALIBRATION` holds for ``embedder`` (lexical
        only, the constructor's defaults, for an embedder without calibration)."""
        if embedder is None or embedder.name not in CALIBRATION:
            return cls(seed=seed)
        options = CALIBRATION[embedder.name]
        return cls(
            embedder=embedder,
            seed=seed,
            threshold=options["threshold"],
            strong_similarity=options["strong_similarity"],
            embedder_weight=options["embedder_weight"],
            second_ratio=options["second_ratio"],
        )

    async def complete(self, messages: ChatMessages, *, temperature: float | None = None) -> str:
        """The reply to ``messages`` (see the class docstring)."""
        return self.respond(messages)

    def respond(self, messages: Sequence[dict[str, str]]) -> str:
        """Synchronous :meth:`complete`."""
        chat = copy_messages(messages)
        query = next((m["content"] for m in reversed(chat) if m["role"] == "user"), "")
        system_texts = [m["content"] for m in chat if m["role"] == "system"]
        rules = forbidden_phrases(system_texts)
        known = quoted_phrases(m["content"] for m in chat)
        request = requested_phrase(query, known=[*rules, *known])
        social = small_talk(query) if request is None else None
        opening, rest = (
            greeting_first(query) if request is None and social is None else (None, query)
        )
        if request is not None:
            reply = request
        elif social is not None:
            reply = social
        elif opening is not None:
            # "Hi, I'm new here.": greet back, then answer the rest as its own message
            tail = [*chat[:-1], {**chat[-1], "content": rest}] if chat else chat
            reply = joined(opening, self.respond(tail))
        else:
            facts = [] if is_question(query) else extract_facts(query)
            # a follow-up that names nothing is about the last message that did, however
            # many such follow-ups came since ("Who do I tell?", then "Who should I contact?")
            previous = thread_topic(user_messages(chat)[:-1])
            helped = None
            if facts and reports_a_problem(query):
                # "I forgot my password": a request for help first, a fact to note second
                helped = self.answer(query, chat, previous=previous, abstain=False)
            if helped:
                reply = helped
            elif facts:
                reply = noted(query, facts)
            else:
                reply = self._answer_each(query, chat, previous=previous)
        if contains_phrase(reply, rules) is not None:
            return self.refusal(rules)
        return reply

    def refusal(self, rules: Sequence[str]) -> str:
        """The first refusal (starting at ``seed``) that contains no forbidden phrase."""
        count = len(REFUSALS)
        for offset in range(count):
            candidate = REFUSALS[(self.seed + offset) % count]
            if contains_phrase(candidate, rules) is None:
                return candidate
        return "..."

    def _answer_each(
        self, query: str, messages: Sequence[dict[str, str]], *, previous: str | None
    ) -> str:
        """The answers to the questions of ``query`` (:func:`asked_parts`) that the context
        answers, each said once, in the order asked ("Did you ask me anything before? What did I
        tell you about my team?" is answered by what the user said of their team); a question
        follows the one before it (:meth:`answer`'s ``previous``). When none is answered (or the
        message asks one question), the answer to the whole message, or the abstention."""
        parts = asked_parts(query)
        answers: list[str] = []
        for n, part in enumerate(parts if len(parts) > 1 else []):
            before = parts[n - 1] if n else previous
            answered = self.answer(part, messages, previous=before, abstain=False, message=query)
            if answered and answered not in answers:
                answers.append(answered)
        if not answers:
            return self.answer(query, messages, previous=previous)
        reply = answers[0]
        for answered in answers[1:]:
            reply = joined(reply, answered)
        return reply

    def answer(
        self,
        query: str,
        messages: Sequence[dict[str, str]],
        *,
        previous: str | None = None,
        abstain: bool = True,
        message: str | None = None,
    ) -> str:
        """The grounded answer to ``query`` from ``messages``, or the abstention ("" instead
        with ``abstain=False``). A follow-up that names no topic of its own ("Who should I
        contact?", "And when do I get paid back?", see
        :func:`~smartctx.agents.relevance.has_own_topic`) is read with the ``previous`` user
        message (the thread's topic) first, and alone when that finds nothing; one that names
        too little to be answered alone ("And my desk?") is read with it when it alone finds
        nothing (see :func:`~smartctx.agents.relevance.contextual_query`). Read with it, the
        question still asks its own kind of value (a time for "when"). ``message`` is the user
        message ``query`` is one question of, whose knowledge this turn retrieved."""
        lang = detect_language(query)
        sentences = extract_knowledge(messages)
        current = current_retrieval(messages, message or query)
        if current:
            # in a long thread older documents stay in the window: this turn's answer first
            fresh = [s for s in sentences if not s.source.startswith("kb:") or s.source in current]
            sentences = fresh if any(s.source in current for s in fresh) else sentences
        searched = query_for(query)
        ranked = self.ranked(searched, sentences)
        if asks_own_words(query) and any(item[0].personal for item in ranked):
            # "What did I tell you about my desk?" asks for the user's words, not a document's
            ranked = [item for item in ranked if item[0].personal]
        named = topic_words(searched)
        # only names ("and in Paris?", "And for New York?"): a follow-up of the exchange before
        names_only = only_names(query, named)
        # in another language a capital makes no name: the similarity that carries such a
        # question to English sentences tells a name from a noun (none without it)
        crossing = self._cosines if self.strong_similarity is not None else None
        unnamed = unknown_in(searched, sentences, crossing)
        if unnamed:
            # "How do I install Zoom?": about something no sentence names; the words it shares
            # ("install") belong to another topic (the VPN client)
            ranked = []
        contextual = contextual_query(query, previous)
        # "Who should I contact?" names no topic: it asks about the thread's ("I lost my laptop")
        follow_up = not has_own_topic(query)
        in_order = True
        read = searched  # what the sentences were ranked for
        if (not ranked or follow_up) and contextual != searched and (names_only or not unnamed):
            # read with the exchange it follows, a follow-up is answered by a sentence about
            # what it names, or about the thread's topic when it names none (first: "And when
            # do I get paid back?" after "How long does reimbursement take?" is not about
            # "paid parental leave")
            in_context = self.ranked(contextual, sentences, asks=query)
            threaded = in_thread(
                query,
                previous,
                in_context,
                named=named,
                follow_up=follow_up,
                names_only=names_only,
            )
            if threaded or not ranked:
                ranked, read = threaded, contextual
                # the sentence nearest the user's situation answers first ("Report a lost or
                # stolen laptop ..." before "Report a broken laptop ..." after "I lost my
                # laptop")
                in_order = not follow_up
        if searched == ABOUT_USER_QUESTION:
            # "What do you know about me?": what the user stated of themselves, each once
            ranked = about_user(sentences)
            if ranked and asks_user_fact(query):
                # "Where do I work?": the statement that bears on it
                ranked = user_fact(query, [item[0] for item in ranked], self.ranked)
        elif searched != query:
            # "Who am I?": only what the user said of themselves answers it ("Passwords must
            # not contain your name" does not)
            ranked = [item for item in ranked if item[0].personal]
        if ranked and searched != ABOUT_USER_QUESTION and ranked[0][2] < 0:
            # the best sentence shares a word but nothing of the question's meaning ("Who is
            # the CEO of the company?" and "The company VPN ... gives you access", similarity
            # below zero); it was left out below, and the reply was empty
            ranked = []
        if not ranked:
            if not abstain:
                return ""
            other = LANG_NO_INFORMATION.get(lang)
            return f"{other} ({NO_INFORMATION})" if other else NO_INFORMATION
        if searched == ABOUT_USER_QUESTION:
            return say([item[0] for item in ranked], lang)
        # "How long does reimbursement take?": not the deadline of the claim it is the aim of
        chosen = self._chosen(when_done(searched, ranked, sentences), searched, read)
        action = asked_action(query)
        if action is not None and len(chosen) > 1:
            # a step for another task does not come along ("How do I order a new laptop?": not
            # the VPN step that says "On a new laptop it is already installed")
            plainly = on_topic(topic_words(query), sentences, action)
            chosen = chosen[:1] + [s for s in chosen[1:] if s.step is None or plainly(s)]
        procedure = asks_how(query) and any(s.step is not None for s in chosen)
        if procedure:
            # "How do I reset my password?" is answered by the whole procedure, not by the
            # one step that shares the most words with it
            chosen = whole_procedures(chosen, sentences, topic_words(searched), action)
            procedure = any(s.step is not None for s in chosen)
        # the best sentence's source first; within a source, the document's own order; a
        # procedure asked for comes before what else was chosen ("Comment réinitialiser mon mot
        # de passe ?": the steps, then the rule on reused passwords)
        first = {s.source: n for n, s in reversed(list(enumerate(chosen)))}
        rank = {id(s): n for n, s in enumerate(chosen)}
        chosen.sort(
            key=lambda s: (
                procedure and s.step is None,
                first[s.source],
                s.order if in_order or procedure else rank[id(s)],
            )
        )
        return say(chosen, lang, numbered=procedure)

    def _chosen(
        self, ranked: Sequence[tuple[Sentence, float, float]], searched: str, read: str
    ) -> list[Sentence]:
        """The sentences of ``ranked`` (best first, for ``read``: ``searched`` or, for a
        follow-up, the thread's topic with it) said in answer to ``searched``: the best one and
        those close enough to it (see the class docstring), each fact once."""
        top, best, best_similarity = ranked[0]
        # The same fact often reaches the prompt twice (a memory item and a remembered pair):
        # say it once, from its best-ranked source. A sentence from another document must also
        # be about as close in meaning as the best, one from its document half as close:
        # sharing a word ("days", "night") is not one topic.
        chosen: list[Sentence] = []
        said: set[str] = set()
        # a value the question asks for; a procedure ("steps") is said whole after this choice
        wanted = tuple(t for t in answer_types(searched) if t != "steps")
        typed = bool(wanted) and gives(top.text, wanted)
        # the question's words the best sentence holds, in itself or its section, name what it
        # is about ("sick" of "What about sick leave?", "reimbursement" of a follow-up read
        # with "How long does reimbursement take?"): a second one must hold them too
        held = [t for t in topic_words(read) if holds(top.tokens | top.context_tokens, t)]
        for sentence, value, similarity in ranked:
            if len(chosen) == self.max_sentences or value < self.second_ratio * best:
                break
            if chosen and typed and not gives(sentence.text, wanted):
                # the best sentence holds what the question asks for ("USD 60"); one beside it
                # that holds none ("This policy covers ... meals") adds words, not the answer
                continue
            same = document_of(sentence.source) == document_of(top.source)
            near = (SAME_DOCUMENT_SIMILARITY if same else self.second_ratio) * best_similarity
            if similarity < near or sentence.personal != top.personal:
                # what the user said of themselves answers a question about them; a policy
                # sentence beside it ("Laptops are replaced every 4 years") answers another one
                continue
            if not all(holds(sentence.tokens | sentence.context_tokens, t) for t in held):
                # "Tell HR at least 8 weeks before the leave starts" shares "leave" and is
                # about parental leave
                continue
            key = " ".join(sorted(sentence.tokens))
            if key not in said:
                said.add(key)
                chosen.append(sentence)
        return chosen

    def rank(self, query: str, sentences: Sequence[Sentence]) -> list[tuple[Sentence, float]]:
        """Sentences that may answer ``query``, best first, with their scores (see
        :meth:`ranked`)."""
        return [(sentence, value) for sentence, value, _ in self.ranked(query, sentences)]

    def ranked(
        self, query: str, sentences: Sequence[Sentence], *, asks: str | None = None
    ) -> list[tuple[Sentence, float, float]]:
        """Sentences that may answer ``query`` with their score and similarity, best first
        (ties: earlier first).

        A sentence qualifies when it shares a word with the query and scores at least
        ``threshold`` (:func:`smartctx.agents.answer_scoring.score`), or, with an embedder and
        ``strong_similarity`` set, when its similarity alone reaches it and it is in another
        language than the query (a sentence of the query's language must share a word). A query
        in another language than most sentences is scored with its words that none holds
        weighing the least (``foreign`` of :func:`~smartctx.agents.answer_scoring.score`): the
        word it shares ("taxi") counts.
        Lead-ins ending with a colon ("Limits for travel:") are context, not answers.
        The query is scored as read in the sentences' words
        (:func:`~smartctx.retrieval.readings.general_reading`): without a place none names,
        a Latin expression none uses in plain words.
        """
        candidates = [s for s in sentences if not s.text.rstrip().endswith(":")]
        if not analyze(query) or not candidates:
            return []
        # read in the sentences' words: a place none names ("Can I fly business class to
        # Singapore?") tells none apart, the rule stated in general holds there; a Latin
        # expression none uses ("per diem") is said in plain words ("daily allowance")
        query = general_reading(query, held_by(candidates)) or query
        sims: list[float] | None = None
        if self.embedder is not None and self.embedder_weight > 0:
            sims = self._cosines(query, [s.text for s in candidates])
        lang = detect_language(query)
        scored = score(
            query,
            candidates,
            sims,
            similarity_weight=self.embedder_weight,
            instruction=on_topic(topic_words(query), sentences, asked_action(query)),
            asks=asks,
            foreign=lang != _evidence_language(candidates),
        )
        strong = self.strong_similarity
        ranked: list[tuple[Sentence, float, float]] = []
        # When no sentence shares a word with the question (another language), similarity is
        # the one signal left: it counts in full, the answer type and names still counting
        # ("Wie lang muss ein neues Passwort sein?": the sentence of "14 characters" before the
        # closer "Passwords expire every 365 days"). Beside sentences that share words, one
        # that shares none ranks by its similarity or its score, whichever is higher.
        w = self.embedder_weight
        # (a word met only in a sentence's context, "Limits for travel:" for "limite", is not
        # one it shares)
        lexical_any = any(item.shared for item in scored)
        if (
            sims is not None
            and strong is not None
            and all(item.similarity < strong for item in scored)
            and (
                unnamed_action(query, sentences) is not None
                or unnamed_thing(query, sentences, self._cosines) is not None
            )
        ):
            # "How do I print from my laptop?": no sentence says "print", nor one in other words
            # (as close in meaning as a sentence that shares no word must be); "laptop" is where.
            # "How do I report a broken chair?": none names a chair; "Report a broken laptop" is
            # about another thing
            return []
        for item in scored:
            if item.sentence.source == "conversation" and item.lexical < CONVERSATION_OVERLAP:
                continue  # what the user said earlier answers only what it is plainly about
            if item.lexical > 0 and item.score >= self.threshold and item.topical:
                ranked.append((item.sentence, item.score, item.similarity))
            elif (
                not item.shared
                and strong is not None
                and item.similarity >= strong
                and _language(item.sentence.text) != lang
            ):
                # no shared word: the similarity alone must be strong, and it carries a question
                # across languages only; in its own language a sentence that shares none of its
                # words is as close as unrelated ones ("What are the office opening hours?" and
                # "tell your manager before 10:00", 0.29)
                bonus = item.score - w * item.similarity
                value = item.similarity + (0.0 if lexical_any else bonus)
                ranked.append((item.sentence, max(item.score, value), item.similarity))
        ranked.sort(key=lambda pair: (-pair[1], pair[0].order))
        return ranked

    def _cosines(self, query: str, texts: list[str]) -> list[float]:
        embedder = self.embedder
        if embedder is None:
            return [0.0] * len(texts)
        if isinstance(embedder, RetrievalEmbedder):
            q = embedder.embed_queries([query])[0]
        else:
            q = embedder.embed([query])[0]
        with self._cache_lock:
            local = {t: self._vectors[t] for t in dict.fromkeys(texts) if t in self._vectors}
        missing = [t for t in dict.fromkeys(texts) if t not in local]
        if missing:
            vectors = embedder.embed(missing)
            with self._cache_lock:
                for text, vector in zip(missing, vectors, strict=True):
                    local[text] = vector
                    self._vectors[text] = vector
                while len(self._vectors) > _CACHE_SIZE:
                    self._vectors.popitem(last=False)
        return [float(np.dot(q, local[t])) for t in texts]
