"""Reading a user's question against the prompt's evidence, for the offline responder
(:mod:`smartctx.agents.grounded`).

What a question names decides what may answer it: :func:`unknown_in` finds the names no sentence
of the evidence holds ("Zoom" in "How do I install Zoom?" and in "Wie installiere ich Zoom auf
meinem Laptop?": nothing answers it);
:func:`only_names` tells a follow-up that names nothing but names ("and in Paris?");
:func:`asks_own_words` a question of what the user said ("What did I tell you about my desk?").
:func:`in_thread` picks, among the sentences ranked for a question read with the exchange it
follows (:func:`~smartctx.agents.relevance.contextual_query`), those that answer it: the
sentences about what it names, or for a follow-up that names no topic of its own ("Who do I
tell?"), those about the thread's topic, what it asks for first, never the user's statement it
follows. :func:`unnamed_action` finds the action a question asks how to do when no sentence
names it ("print" in "How do I print from my laptop?"), :func:`unnamed_thing` the thing it asks
to act on when no sentence names it and they say its adjective of other things only ("chair" in
"How do I report a broken chair?" beside "Report a broken laptop"). Pure functions; the cost is
linear in the number of sentences (their words are gathered once per question),
:func:`unnamed_thing` asks its similarity once, of a few words, and :func:`unknown_in` twice for
each capitalised word no sentence holds of a question in another language.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import pairwise

from smartctx.agents.answer_scoring import LIGHT_WORDS, answer_types, derived_in, has_type
from smartctx.agents.knowledge import Sentence
from smartctx.agents.language import detect_language
from smartctx.agents.relevance import topic_words
from smartctx.retrieval.analysis import analyze
from smartctx.retrieval.readings import general_reading, unknown_names

_OWN_WORDS = re.compile(
    r"\b(?:did|have|had)\s+I\s+(?:ever\s+)?(?:tell|say|mention|write)\b"
    r"|\bI\s+(?:told|said|mentioned|wrote)\b"
    r"|\b(?:habe|hatte)\s+ich\b.*\b(?:gesagt|erz[äa]hlt|erw[äa]hnt|geschrieben)\b",
    re.IGNORECASE,
)
_SENTENCE_START = re.compile(r"(?<=[.!?:;])\s+")
_WORD = re.compile(r"[^\W\d_][\w'-]*")
_HOW_TO_DO = re.compile(
    r"\bhow\s+(?:do|can|could|should|would|shall)\s+(?:i|we)\s+(?P<verb>[^\W\d_]+)"
    r"|\bhow\s+to\s+(?P<to>[^\W\d_]+)",
    re.IGNORECASE,
)
"""A question of how to do something and its action ("How do I *print* from my laptop?")."""
Similarity = Callable[[str, list[str]], Sequence[float]]
"""The similarity in meaning of a text (a word, a question) to each of some others."""
_NAME = r"[A-ZÀ-ÖØ-Þ][^\W\d_]*(?:[-'][^\W\d_]+)*"
_PLACED = re.compile(
    r"(?<![\w-])(?i:in|im|nach|aus|bei|vom|zum|en|a|desde|à|au|aux|dans)\s+"
    rf"(?P<name>{_NAME}(?:\s+{_NAME})*)"
)
"""A preposition of place in German, Spanish or French and the name after it ("in Singapur",
"en Londres", "à New York"): where a rule applies, not what a question asks about."""


def asks_own_words(question: str) -> bool:
    """Whether ``question`` asks what the user said ("What did I tell you about my desk?",
    "What was it I said my badge number was?", "Was habe ich über meinen Schreibtisch gesagt?"):
    then the user's own statements answer it, not a document that shares its words."""
    return _OWN_WORDS.search(question) is not None


def names(text: str) -> list[str]:
    """The words of ``text`` written with a capital inside a sentence (not its first word, not
    all capitals): names of places and people ("Paris", "New York"), not acronyms ("USD")."""
    out: list[str] = []
    for part in _SENTENCE_START.split(text):
        words = _WORD.findall(part)
        out += [w for w in words[1:] if w[0].isupper() and not w.isupper()]
    return out


def only_names(question: str, named: Sequence[str]) -> bool:
    """Whether ``named``, the topic words of ``question``, are all names it writes ("and in
    Paris?", "And for New York?"): a follow-up of the exchange before."""
    return bool(named) and set(named) <= set(topic_words(" ".join(names(question))))


def held_by(sentences: Sequence[Sentence]) -> Callable[[str], bool]:
    """Whether one of ``sentences`` (or its section) holds an analysed word; their words are
    gathered on the first question."""
    held: list[frozenset[str]] = []

    def knows(term: str) -> bool:
        if not held:
            held.append(frozenset().union(*(s.tokens | s.context_tokens for s in sentences)))
        return term in held[0]

    return knows


def unknown_in(
    question: str, sentences: Sequence[Sentence], similarity: Similarity | None = None
) -> list[str]:
    """The names ``question`` asks about that none of ``sentences`` names
    (:func:`~smartctx.retrieval.readings.unknown_names`, on the question read in their words, so
    a place where a rule applies is not one): "Zoom" in "How do I install Zoom?", "Euro" in
    "What is the Euro exchange rate?". In another language a capital makes no name (German
    writes every noun with one, and no English sentence holds "Urlaubstage"): there a word
    written so that no sentence holds is a name only when the question is closer in meaning
    to the sentences without it than with it (:func:`draws_away`, under ``similarity``): "Zoom"
    in "Wie installiere ich Zoom auf meinem Laptop?", not "Singapur" in "Wie viel darf ein
    Hotel in Singapur kosten?" (a place after its preposition, :data:`_PLACED`). Without
    ``similarity`` such a question has none."""
    english = detect_language(question) == "en"
    if not english and similarity is None:
        return []
    candidates = [s for s in sentences if not s.text.rstrip().endswith(":")]
    knows = held_by(candidates)
    reading = general_reading(question, knows) or question
    found = unknown_names(reading, knows)
    if english or not found or similarity is None:
        return found
    # "Wie viel darf ein Hotel in Singapur kosten?": a place, where the rule applies; the verb
    # that ends a German clause follows it, so the English reading did not leave it out
    places = {w for m in _PLACED.finditer(reading) for w in m.group("name").split()}
    texts = [s.text for s in candidates]
    return [
        name
        for name in found
        if name not in places and draws_away(reading, name, texts, similarity)
    ]


def without(text: str, word: str) -> str:
    """``text`` with ``word`` left out where it stands as a word ("Wie installiere ich auf
    meinem Laptop?")."""
    left = re.sub(rf"(?<![\w-]){re.escape(word)}(?![\w-])", "", text)
    return re.sub(r"\s+([?!.,;:])", r"\1", " ".join(left.split()))


def draws_away(question: str, word: str, texts: Sequence[str], similarity: Similarity) -> bool:
    """Whether ``word`` of ``question`` draws it away from all of ``texts``: the question
    without it is closer in meaning (``similarity``, its best over ``texts``) than with it.
    A word the texts say in another language draws the question towards them ("Urlaubstage":
    0.36 to "Full-time employees have 25 days of paid annual leave", 0.09 without it); a name
    they never speak of draws it away ("Zoom": 0.30 to the GlobalProtect step, 0.36 without
    it). Two similarity calls; the texts' vectors are the caller's to cache."""
    if not texts:
        return False
    rest = without(question, word)
    if rest == question or not analyze(rest):
        return False
    return max(similarity(rest, list(texts))) > max(similarity(question, list(texts)))


LIGHT_ACTIONS: frozenset[str] = LIGHT_WORDS | frozenset(
    analyze("be do go have use see keep put start stop try ask")
)
"""Verbs that name no task of their own ("How do I *get* a new phone?", "How do I *use* ...")."""


def asked_action(question: str) -> str | None:
    """The action an English ``question`` asks how to do ("How do I *order* a new laptop?",
    "How to *reset* my password"), or None: another kind of question, another language, or a
    verb that names no task (:data:`LIGHT_ACTIONS`)."""
    if detect_language(question) != "en":
        return None
    asked = _HOW_TO_DO.search(question)
    if asked is None:
        return None
    verb = asked.group("verb") or asked.group("to")
    return verb if any(t not in LIGHT_ACTIONS for t in analyze(verb)) else None


def unnamed_action(question: str, sentences: Sequence[Sentence]) -> str | None:
    """The action an English ``question`` asks how to do when none of ``sentences`` (nor its
    section) holds it or another form of it: "print" in "How do I print from my laptop?",
    "change" in "How do I change my bank account for payroll?". None when one does, for a light
    action ("How do I get a new phone?") and for a question that does not ask how. Such a
    question is not answered by the words it shares ("laptop": "Report a broken laptop ...");
    only a sentence that says the action in other words can answer it ("How do I change my
    password?" and "Choose a new password")."""
    verb = asked_action(question)
    if verb is None:
        return None
    terms = [t for t in analyze(verb) if t not in LIGHT_ACTIONS]
    known = frozenset().union(*(s.tokens | s.context_tokens for s in sentences))
    if not terms or any(t in known or derived_in(t, known) for t in terms):
        return None
    return verb


PARTICLES: frozenset[str] = frozenset({
    "up", "down", "out", "off", "in", "on", "at", "to", "from", "into", "onto", "over", "under",
    "with", "without", "for", "of", "about", "by", "via", "through", "after", "before", "during",
    "between", "back", "away", "around", "across",
})  # fmt: skip
"""Prepositions and particles: they join a verb ("set *up* the VPN", "connect *to* the VPN") or
end a noun phrase ("a day *off*", "a new laptop *for* my team"); no word of its own."""
_TOKEN = re.compile(r"[^\W\d_][\w'-]*|[^\w\s]")
ANOTHER_THING = 0.5
"""Word similarity under which two nouns name different things: "chair" and "laptop" (USE 0.40),
"phone" and "password" (0.35), while a noun said in other words is closer ("dinner" and
"meals" 0.73, "cab" and "taxis" 0.71, "notebook" and "laptop" 0.78, "vacation" and "leave"
0.56)."""


def asked_phrase(question: str) -> list[str]:
    """The noun phrase an English ``question`` asks how to act on, as written: the first run of
    words after its verb that are neither stop words nor :data:`PARTICLES` ("broken", "chair" of
    "How do I report a broken chair?", "VPN" of "How do I connect to the VPN on a new laptop?");
    empty for another kind of question or another language."""
    if detect_language(question) != "en":
        return []
    asked = _HOW_TO_DO.search(question)
    if asked is None:
        return []
    words: list[str] = []
    for token in _TOKEN.findall(question[asked.end() :]):
        plain = token[0].isalpha() and bool(analyze(token)) and token.casefold() not in PARTICLES
        if plain:
            words.append(token)
        elif words or not token[0].isalpha():
            break  # the phrase ends; a determiner or particle before it is passed over
    return words


def unnamed_thing(
    question: str, sentences: Sequence[Sentence], similarity: Similarity
) -> str | None:
    """The noun an English ``question`` asks how to act on when none of ``sentences`` (nor its
    section) holds it or another form of it, and the word before it in the question is said in
    them only of other things, none as close in meaning as :data:`ANOTHER_THING`
    (``similarity``): "chair" of "How do I report a broken chair?" beside "Report a broken
    laptop ...". Such a sentence shares the question's action and its adjective and speaks of
    another thing; the question is about a thing the evidence never names. None when a sentence
    holds the noun, when the adjective is said of nothing or of the noun in other words ("How do
    I claim a business dinner?" beside "business meals"), and for another kind of question
    (:func:`asked_phrase`)."""
    phrase = asked_phrase(question)
    if len(phrase) < 2:
        return None
    head, before = phrase[-1], frozenset(analyze(phrase[-2]))
    known = frozenset().union(*(s.tokens | s.context_tokens for s in sentences))
    terms = analyze(head)
    if not terms or any(t in known or derived_in(t, known) for t in terms):
        return None
    others: set[str] = set()
    for sentence in sentences:
        tokens = _TOKEN.findall(sentence.text)
        for word, following in pairwise(tokens):
            said = analyze(word)
            if (
                said
                and all(t in before or derived_in(t, before) for t in said)
                and following[0].isalpha()
                and analyze(following)
                and following.casefold() not in PARTICLES
            ):
                others.add(following)
    if not others:
        return None
    named = sorted(others)
    return head if max(similarity(head, named)) < ANOTHER_THING else None


def in_thread(
    question: str,
    previous: str | None,
    in_context: Sequence[tuple[Sentence, float, float]],
    *,
    named: Sequence[str],
    follow_up: bool,
    names_only: bool,
) -> list[tuple[Sentence, float, float]]:
    """The sentences of ``in_context`` (ranked, best first, for ``question`` read with the
    ``previous`` user message) that answer ``question``, best first.

    A question that names something (``named``, its topic words: "and in London?") is answered
    by a sentence about it ("How do I contact you?" after a hotel question is not answered with
    the hotel limit). A ``follow_up`` (no topic of its own: "Who should I contact?") is answered
    by any of them but the user's statement it is read with ("I like pizza on fridays", then
    "What should I do?"), those holding what it asks for first (after "I want to take parental
    leave", "Who do I ask?" is answered by whom to tell). When none is left and the question
    names only names (``names_only``: "and in Paris?" after the London hotel limit, no sentence
    naming Paris), the sentences naming names: the rule the exchange found, which names its
    exceptions ("USD 250 in London, Tokyo ..."), holds for it."""
    ranked = [
        item
        for item in in_context
        if follow_up
        or not named
        or any(t in item[0].tokens or derived_in(t, item[0].tokens) for t in named)
    ]
    if follow_up and previous is not None and not asks_own_words(question):
        # the statement a follow-up is read with is its question, not its answer
        asked = set(analyze(previous))
        ranked = [i for i in ranked if not (i[0].personal and i[0].tokens <= asked)]
        # the topic is the thread's, what is asked the follow-up's
        values = tuple(t for t in answer_types(question) if t != "steps")
        ranked.sort(key=lambda item: not (values and has_type(item[0].text, values)))
    if not ranked and names_only:
        ranked = [item for item in in_context if names(item[0].text)]
    return ranked
