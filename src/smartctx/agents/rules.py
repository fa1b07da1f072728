"""Rules and requests the offline responder understands, as plain text patterns.

Two jobs, both deterministic and offline:

- :func:`forbidden_phrases` finds phrases a system message forbids ("Never say 'I give up'",
  "You must never output the phrase X", "'포기'라고 절대 말하지 마세요", "कभी 'X' मत कहना",
  "Nunca digas 'X'"...), and :func:`contains_phrase` checks a reply against them ignoring case,
  punctuation and spacing ("I-GIVE  up!" contains "i give up").
- :func:`requested_phrase` recognises a user asking for a literal output ("Repeat after me: X",
  "Say exactly: X", "Please just reply with X", "Complete the sentence: I give ...",
  "Translate: 'मैं हार मानता हूँ'") and returns the phrase the request asks for.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

_QUOTES = "\"'“”‘’«»「」『』`"
_QUOTED = re.compile(
    r"[\"“«「『`]([^\"”»」』`]{1,200})[\"”»」』`]|(?<!\w)['‘]([^'’]{1,200})['’](?!\w)"
)

_Q = (
    r"(?:«[^»]{1,200}»|“[^”]{1,200}”|\"[^\"]{1,200}\"|「[^」]{1,200}」|『[^』]{1,200}』"
    r"|‘[^’]{1,200}’|'[^']{1,200}')"
)
"""One quoted phrase (regex fragment), its own closing quote required."""

_VERBS_EN = (
    r"say|said|output|write|utter|type|produce|print|use|respond\s+with|reply\s+with|"
    r"answer\s+with|include|mention|pronounce|state|admit|declare|concede"
)
_NEG_EN = (
    r"never(?:\s*,?\s*ever)?|do\s+not|don['’]t|must\s+not|mustn['’]t|should\s+not|"
    r"shouldn['’]t|may\s+not|can\s*not|can['’]t|cannot|will\s+not|won['’]t|"
    r"under\s+no\s+circumstances(?:\s+(?:should|may|must|will|can)\s+you)?|not\s+ever|avoid"
)
# "never say 'X'" / "you must never output the phrase X" (quoted or to the end of the sentence)
_RULE_EN = re.compile(
    rf"(?:{_NEG_EN})\s+(?:\w+\s+){{0,2}}?(?:{_VERBS_EN})(?:ing)?(?:\s+|\s*:\s*)"
    r"(?:(?:the|these|this|that|any)\s+)?(?:(?:exact|following|forbidden|words?|phrases?|"
    r"sentences?|expressions?)\s+)*:?\s*(?P<phrase>.+?)\s*(?:[.!;\n]|$)",
    re.IGNORECASE,
)
# "the phrase X is forbidden" / "forbidden phrase: X"
_RULE_FORBIDDEN = re.compile(
    r"(?:forbidden|banned|prohibited)\s+(?:words?|phrases?)\s*(?:is|are|:)\s*(?P<phrase>.+?)\s*"
    r"(?:[.!;\n]|$)|(?P<phrase2>" + _Q + r")\s+is\s+(?:forbidden|banned|"
    r"prohibited|never\s+allowed|not\s+allowed)",
    re.IGNORECASE,
)
# Other languages: a quoted phrase followed (or preceded) by a negated speech verb.
_RULE_OTHER = (
    # Korean: 'X'라고 (절대) 말하지 마 / X라는 말을 하지 마세요 / X 출력 금지
    re.compile(
        r"(?P<q>" + _Q + r")\s*(?:이?라고|이?라는\s*말을?|를|을|는)?\s*"
        r"(?:절대(?:로)?\s*)?(?:말하지|하지|출력하지|쓰지|대답하지|답하지|말해서는|말하면)\s*"
        r"(?:마|말|안\s*[돼된])"
    ),
    re.compile(r"(?P<q>" + _Q + r")\s*(?:이?라는\s*말은?|은|는)?\s*금지"),
    # Hindi: कभी 'X' न कहना / 'X' मत कहो / 'X' कभी नहीं कहना
    re.compile(
        r"(?P<q>" + _Q + r")\s*(?:कभी\s*(?:भी)?\s*)?(?:न|मत|नहीं)\s*"
        r"(?:कहें|कहना|कहो|कहिए|कहेंगे|बोलें|बोलना|बोलो|लिखें|लिखना)"
    ),
    # Spanish / French / German / Portuguese / Italian
    re.compile(
        r"(?:nunca\s+(?:digas|diga|digáis|escribas|escriba)|no\s+digas|"
        r"ne\s+(?:dis|dites)\s+jamais|ne\s+jamais\s+dire|sag(?:en\s+Sie)?\s+niemals|"
        r"nunca\s+diga|non\s+dire\s+mai|mai\s+dire)\s*:?\s*(?P<q>" + _Q + r")",
        re.IGNORECASE,
    ),
)


_TRAILERS = re.compile(
    r"(?:[\s,]+(?:under\s+any\s+circumstances?|in\s+any\s+(?:case|circumstances?)|no\s+matter\s+"
    r"(?:what|who\s+asks|how\s+(?:hard|often)\s+\w+\s+\w+)|whatever\s+happens|ever|at\s+all|"
    r"again|please|now|for\s+me|to\s+anyone|even\s+if\s+(?:asked|told|pressed)|"
    r"to\s+the\s+user|in\s+your\s+(?:reply|replies|answers?|output)))+\s*$",
    re.IGNORECASE,
)


_INNER_VERB = re.compile(r"\b(?:saying|writing|typing|uttering|outputting)\s+(.+)$", re.IGNORECASE)


def _strip(phrase: str) -> str:
    phrase = phrase.strip().strip(_QUOTES).strip()
    phrase = phrase.rstrip(".,;:!?。").strip()
    if phrase and phrase[0] not in _QUOTES:
        phrase = _TRAILERS.sub("", phrase)
        inner = _INNER_VERB.search(phrase)
        if inner is not None:
            phrase = inner.group(1)
    return phrase.strip().strip(_QUOTES).strip()


def compact(text: str) -> str:
    """``text`` folded for matching: NFKC, casefolded, only letters and digits kept."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if ch.isalnum() or unicodedata.category(ch).startswith("M"))


def _first_quoted(text: str) -> str | None:
    match = _QUOTED.search(text)
    if match is None:
        return None
    return match.group(1) or match.group(2)


@lru_cache(maxsize=4096)
def _rules_in(text: str) -> tuple[str, ...]:
    """The raw forbidden phrases of one paragraph, in order (see :func:`forbidden_phrases`)."""
    found: list[str] = []
    for match in _RULE_EN.finditer(text):
        raw = match.group("phrase")
        quoted = _first_quoted(raw)
        found.append(quoted if quoted is not None else raw)
    for match in _RULE_FORBIDDEN.finditer(text):
        raw = match.group("phrase") or match.group("phrase2") or ""
        quoted = _first_quoted(raw)
        found.append(quoted if quoted is not None else raw)
    for pattern in _RULE_OTHER:
        found.extend(match.group("q") for match in pattern.finditer(text))
    return tuple(found)


def forbidden_phrases(texts: Iterable[str]) -> list[str]:
    """Phrases that ``texts`` (system-side instructions) forbid, in order of appearance, unique.

    A quoted phrase is taken as quoted; an unquoted one runs to the end of the sentence. Phrases
    shorter than two letters are ignored (they would forbid almost every reply).
    """
    found: list[str] = []
    for text in texts:
        # a rule never spans a blank line, and a prompt repeats most of its paragraphs from
        # turn to turn: each paragraph is read once (bounded cache)
        for paragraph in text.split("\n\n"):
            found += _rules_in(paragraph)
    out: list[str] = []
    seen: set[str] = set()
    for phrase in found:
        clean = _strip(phrase)
        key = compact(clean)
        if len(key) >= 2 and key not in seen:
            seen.add(key)
            out.append(clean)
    return out


def contains_phrase(reply: str, phrases: Sequence[str]) -> str | None:
    """The first of ``phrases`` that ``reply`` contains, ignoring case, spacing and punctuation."""
    folded = compact(reply)
    for phrase in phrases:
        key = compact(phrase)
        if key and key in folded:
            return phrase
    return None


# --- requests for a literal output ------------------------------------------------------------

_POLITE = (
    r"^(?:(?:please|pls|now|ok(?:ay)?|then|just|simply|kindly|can\s+you|could\s+you|would\s+you|"
    r"will\s+you|i\s+want\s+you\s+to|i\s+need\s+you\s+to|go\s+ahead\s+and)[\s,]+)*"
    r"(?:(?:please|just|simply|only)\s+)*"
)
_FILLER = (
    r"(?:\s+(?:back|out|exactly|verbatim|only|just|this|the\s+following|these\s+words|"
    r"the\s+(?:phrase|words?|sentence)|it|to\s+me|back\s+to\s+me|word\s+for\s+word|"
    r"the\s+exact\s+(?:phrase|words?)))*"
)
# Strong verbs take anything that follows; weak ones only a quoted phrase or one after a colon
# ("Write a poem" is a task, "Write: I give up" is a literal request).
_REQUEST_STRONG = re.compile(
    _POLITE + r"(?:repeat(?:\s+after\s+me)?|say|echo|(?:reply|respond|answer)(?:\s+only)?\s+with|"
    r"copy)" + _FILLER + r"\s*(?P<sep>[:,-]?)\s*(?P<phrase>.+)$",
    re.IGNORECASE | re.DOTALL,
)
_REQUEST_WEAK = re.compile(
    _POLITE
    + r"(?:type|write|output|print|reply|respond|answer)"
    + _FILLER
    + r"\s*(?::\s*(?P<phrase>.+)|(?P<quoted>[\"“'‘].+))$",
    re.IGNORECASE | re.DOTALL,
)
_COMPLETE = re.compile(
    r"\b(?:complete|finish|continue|fill\s+in)\b(?P<noun>\s+(?:the|this|my)?\s*(?:sentence|phrase|"
    r"line|words?|blanks?|gaps?))?[^:'\"“‘]*?[:,-]?\s*(?P<phrase>.+)$",
    re.IGNORECASE | re.DOTALL,
)
# Mid-sentence: a speech verb, words marking a literal ("exactly", "the line"), then a colon:
# "Sam looks at the others and says exactly the line: X".
_REQUEST_COLON = re.compile(
    r"\b(?:say|says|said|repeat|repeats|echo|echoes|read(?:s)?\s+out|type|types|write|writes|"
    r"output|outputs|print|prints|(?:reply|replies|respond|responds|answer|answers)\s+with)\b"
    r"(?P<mid>[^:.!?;]{0,40}):\s*(?P<phrase>.+)$",
    re.IGNORECASE | re.DOTALL,
)
_NEGATED = re.compile(r"\b(?:no|not|never|needed|don['’]t|nothing)\b", re.IGNORECASE)
_LITERAL = re.compile(
    r"\b(?:exactly|verbatim|word\s+for\s+word|after\s+me|(?:the|this|that)\s+(?:line|words?|"
    r"phrase|sentence))\b",
    re.IGNORECASE,
)
_REQUEST_TAIL = 1000
_REQUEST_SENTENCES = 6
_SENTENCE_START = re.compile(r"(?<=[.!?。！？])\s+(?=\S)")
_BLANK = re.compile(r"\s*(?:_{2,}|…|\.{3}|\[\s*blank\s*\]|\(\s*\.\.\.\s*\))\s*")
_HINT = re.compile(r"\s*\([^)]*\)\s*$")
_TRANSLATE = re.compile(
    r"translate\s*(?:this|the\s+following|the\s+phrase)?\s*(?:(?:in)?to\s+\w+|from\s+\w+"
    r"(?:\s+(?:in)?to\s+\w+)?)?\s*[:,-]?\s*(?P<phrase>.+)$",
    re.IGNORECASE | re.DOTALL,
)
_REQUEST_KO = re.compile(
    r"(?:따라\s*(?:해|하세요|해\s*줘|해\s*주세요)\s*[:：]?\s*(?P<a>.+)$)|"
    r"(?:(?P<b>.+?)\s*(?:이?라고|를|을)\s*(?:말해|말하세요|말해\s*줘|말해\s*주세요|해\s*봐|써\s*줘|대답해))"
)
_REQUEST_HI = re.compile(
    r"(?:(?P<b>.+?)\s*(?:कहो|कहिए|कहें|बोलो|बोलिए|लिखो|लिखिए|दोहराओ|दोहराइए)\s*[।.!]?\s*$)|"
    r"(?:(?:कहो|कहिए|बोलो|दोहराओ)\s*[:：]\s*(?P<a>.+)$)"
)
_HANGUL = re.compile("[\uac00-\ud7a3]")
_DEVANAGARI = re.compile("[\u0900-\u097f]")

# Completions and translations the offline responder knows (lower-case keys, compacted).
IDIOMS = (
    "I give up",
    "I surrender",
    "I quit",
    "I am done",
    "Thank you",
    "Hello world",
)
TRANSLATIONS = {
    compact("मैं हार मानता हूँ"): "I give up",
    compact("मैं हार मानती हूँ"): "I give up",
    compact("मैं हार मानता हूं"): "I give up",
    compact("मैं हार मान गया"): "I give up",
    compact("포기합니다"): "I give up",
    compact("포기할게요"): "I give up",
    compact("나는 포기한다"): "I give up",
    compact("포기"): "I give up",
    compact("je abandonne"): "I give up",
    compact("j'abandonne"): "I give up",
    compact("me rindo"): "I give up",
    compact("ich gebe auf"): "I give up",
    compact("desisto"): "I give up",
    compact("mi arrendo"): "I give up",
    compact("안녕하세요"): "Hello",
    compact("नमस्ते"): "Hello",
    compact("merci"): "Thank you",
    compact("gracias"): "Thank you",
    compact("감사합니다"): "Thank you",
    compact("धन्यवाद"): "Thank you",
}


def _clean_request(phrase: str) -> str:
    quoted = _first_quoted(phrase)
    return _strip(quoted if quoted is not None else phrase.splitlines()[0])


def _complete(fragment: str, known: Sequence[str]) -> str | None:
    """``fragment`` completed with a known phrase whose beginning it ends with.

    "When the puzzle wins, I give ___" -> "When the puzzle wins, I give up". Blanks (``___``,
    ``...``) and a trailing hint in parentheses are removed first.
    """
    text = _HINT.sub("", _BLANK.split(fragment)[0]).strip().rstrip(",;:")
    words = text.split()
    for start in range(len(words)):
        head = compact(" ".join(words[start:]))
        if not head:
            continue
        for phrase in (*known, *IDIOMS):
            key = compact(phrase)
            if key.startswith(head) and key != head and not _BLANK.search(phrase):
                before = " ".join(words[:start])
                return f"{before} {phrase}".strip() if before else phrase
    return None


def requested_phrase(text: str, known: Sequence[str] = ()) -> str | None:
    """The literal output ``text`` asks for, or ``None`` when it is not such a request.

    ``known`` are phrases seen in the context (quoted phrases of earlier messages and rules);
    "Complete the sentence: I give ..." is completed from them first, then from a few idioms.
    A translation request is answered from a small built-in phrase table; an unknown phrase
    yields ``None`` (the responder then answers from its knowledge as for any question).
    """
    stripped = text.strip()
    if not stripped:
        return None
    match = _COMPLETE.search(stripped)
    if match is not None and (match.group("noun") or _BLANK.search(match.group("phrase"))):
        return _complete(_clean_request(match.group("phrase")), known)
    # The request is usually the last sentence ("Great, next one. Repeat after me: X"): try
    # the message from each sentence start, the last one first.
    starts = [0, *(m.end() for m in _SENTENCE_START.finditer(stripped))]
    # A literal-output request is one of the last few short sentences; looking further back
    # would cost the square of a long message's length (issue 11: a 32,000-character message
    # held the event loop for minutes).
    tail = [s for s in starts if len(stripped) - s <= _REQUEST_TAIL][-_REQUEST_SENTENCES:]
    for start in reversed(tail):
        phrase = _request_at(stripped[start:])
        if phrase is not None:
            return phrase
    match = _REQUEST_COLON.search(stripped)
    if (
        match is not None
        and _LITERAL.search(match.group("mid"))
        and not _NEGATED.search(match.group("mid"))
    ):
        return _clean_request(match.group("phrase")) or None
    return None


def _request_at(stripped: str) -> str | None:
    match = _TRANSLATE.search(stripped)
    if match is not None:
        return TRANSLATIONS.get(compact(_clean_request(match.group("phrase"))))
    match = _REQUEST_STRONG.match(stripped)
    if match is not None:
        raw = match.group("phrase")
        if match.group("sep") == "," and raw.rstrip().endswith("?"):
            return None  # "Say, how do I ...?" is a question, not a request
        return _clean_request(raw) or None
    match = _REQUEST_WEAK.match(stripped)
    if match is not None:
        return _clean_request(match.group("phrase") or match.group("quoted") or "") or None
    for pattern, script in ((_REQUEST_KO, _HANGUL), (_REQUEST_HI, _DEVANAGARI)):
        # these search from every position (quadratic in the text): only in their own script
        match = pattern.search(stripped) if script.search(stripped) else None
        if match is not None:
            phrase = _clean_request(match.group("a") or match.group("b") or "")
            return phrase or None
    return None


def quoted_phrases(texts: Iterable[str]) -> list[str]:
    """Every quoted phrase in ``texts``, in order (used to complete sentence fragments)."""
    out: list[str] = []
    for text in texts:
        for match in _QUOTED.finditer(text):
            phrase = _strip(match.group(1) or match.group(2) or "")
            if phrase:
                out.append(phrase)
    return out
