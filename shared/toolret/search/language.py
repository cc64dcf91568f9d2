"""Does a query read as English? The packaged embedding model only understands English.

all-MiniLM-L6-v2, every model toolret ships, was trained on English text: a Korean or Spanish
request still gets BM25 matches on shared names, but its dense scores are close to noise. The
search cannot fix that offline, but it must not hide it, so a query that reads as another
language gets a ``language`` trace step saying so (:func:`language_step`).

The test is cheap (one pass over at most :data:`SAMPLE_CHARS` characters, no model) and leans
towards silence: quoted or back-quoted text (what the user wants translated or looked up), URLs,
e-mails, paths and code-like tokens are set aside first, so an English request about
``"こんにちは"``, ``José Müller`` or ``el.addEventListener`` stays English.

* Non-Latin letters (Hangul, Han, kana, Cyrillic, Arabic…) weighted by how much text one
  character carries (a Han character is about half a word, a Latin letter a fifth of one): at
  least half the weight, and the query reads as its main script (Japanese when kana are among it).
* Latin script: distinct function words of six common languages against English ones. Two or
  more of one language's and at least twice as many as English ones (``¿Qué tiempo hace en
  Madrid?``), or, with no English function word at all, half the words carrying diacritics
  (``Thời tiết ở Hà Nội``).

Example:
    >>> query_language("최근 박지성에 관한 뉴스를 찾아줘")
    'Korean'
    >>> query_language("¿Qué tiempo hace en Madrid mañana?")
    'Spanish'
    >>> query_language('Translate "Wie ist das Wetter in Berlin?" to English') is None
    True
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections import defaultdict

from toolret.results import TraceStep

__all__ = ["SAMPLE_CHARS", "english_only", "language_step", "query_language"]

#: Characters of the query the test reads: enough for any request, bounded for a pasted one.
SAMPLE_CHARS = 2_000
#: Letters (after weighting) below which a query is too short to tell.
_MIN_WEIGHT = 4.0
#: Weight of a character of a script that writes about a word per character or two.
_DENSE_SCRIPTS = {"CJK": 2.5, "HIRAGANA": 2.5, "KATAKANA": 2.5, "HANGUL": 2.0}
_SCRIPT_LANGUAGE = {
    "CJK": "Chinese or Japanese (Han script)",
    "HIRAGANA": "Japanese",
    "KATAKANA": "Japanese",
    "HANGUL": "Korean",
    "CYRILLIC": "Cyrillic script (Russian, Ukrainian…)",
    "ARABIC": "Arabic script",
    "HEBREW": "Hebrew",
    "GREEK": "Greek",
    "THAI": "Thai",
    "DEVANAGARI": "Devanagari script (Hindi…)",
}
_ENGLISH = frozenset(
    "the a an to of and in on for is are was be with from this that what how can could would you me my i "
    "it at by do does please show find get give tell list all any some about your our which where when who "
    "why have has need want if or not as into up out will should there their its".split()
)
#: Function words that are not also common English words (no "a", "me", "no", "in", "was", "son").
_FUNCTION_WORDS = {
    "Spanish": "el la los las del que y por para con una es está cómo qué dónde cuál cuándo mi mis tu su sus al lo "
    "pero muy hay puedes quiero necesito hola gracias también desde hasta sobre este esta esto ese esa son hace",
    "French": "le la les des du est et une que qui quel quelle je vous nous pour avec dans sur pas ne au aux mon ma "
    "mes ce cette il elle sont être faire où comment pourquoi à très peux voudrais bonjour merci",
    "German": "der die das und ist nicht ein eine einen mit für auf ich du wie wo bitte zu von dem den sind kann "
    "können mein meine bei nach aus auch oder aber über zum zur wir es heute",
    "Portuguese": "os um uma não é são com para por que do da dos das em na meu minha você está como olá obrigado "
    "qual quando onde",
    "Italian": "il lo gli della delle dei che è per con una sono non mi ti ci come dove quando perché ciao grazie "
    "questo questa del al nel alla oggi",
    "Dutch": "de het een en van niet ik je wat hoe waar met voor zijn mijn graag alstublieft dank",
}
_FUNCTION_SETS = {language: frozenset(words.split()) for language, words in _FUNCTION_WORDS.items()}
#: Quoted and back-quoted spans: what the user wants translated or looked up, not how they ask.
_QUOTED = re.compile(r"`[^`]*`|\"[^\"]*\"|“[^”]*”|«[^»]*»|「[^」]*」|『[^』]*』|(?<![A-Za-z])'[^'\n]*'(?![A-Za-z])")
#: Runs of printable ASCII without a space (one match per run: no backtracking on long ones).
_ASCII_RUN = re.compile(r"[!-~]+")
#: In such a run, what makes it code, a URL, an e-mail or a path rather than a word: digits,
#: underscores, code punctuation, an internal dot (``el.addEventListener``) or camelCase.
_CODE = re.compile(r"[\d_/\\=<>{}\[\]()#$%^*~|@]|[A-Za-z]\.[A-Za-z]|[a-z][A-Z]")
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")


def _script(char: str) -> str:
    if char.isascii():
        return "LATIN"
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else "UNKNOWN"


def query_language(text: str) -> str | None:
    """The language (or script) ``text`` reads as when it is not English; None when it reads as
    English or is too short to tell."""
    body = _QUOTED.sub(" ", text[:SAMPLE_CHARS])
    # ASCII runs only: a run of Han characters around a number ("最多10个") keeps its Han characters.
    body = _ASCII_RUN.sub(lambda m: " " if _CODE.search(m.group()) else m.group(), body)
    weights: dict[str, float] = defaultdict(float)
    for char in body:
        if char.isalpha():
            script = _script(char)
            weights[script] += _DENSE_SCRIPTS.get(script, 1.0)
    total = sum(weights.values())
    if total < _MIN_WEIGHT:
        return None
    if (total - weights["LATIN"]) * 2 >= total:
        if weights["HIRAGANA"] or weights["KATAKANA"]:  # kana among Han characters: Japanese
            return "Japanese"
        script = max((s for s in weights if s != "LATIN"), key=weights.__getitem__)
        return _SCRIPT_LANGUAGE.get(script, f"{script.title()} script")
    words = [w.lower() for w in _WORD.findall(body) if _script(w[0]) == "LATIN"]
    distinct = set(words)
    english = len(distinct & _ENGLISH)
    language, foreign = max(
        ((lang, len(distinct & fset)) for lang, fset in _FUNCTION_SETS.items()), key=lambda lh: lh[1]
    )
    if foreign >= 2 and foreign >= 2 * english:
        return language
    accented = sum(not w.isascii() for w in words)
    if not english and len(words) >= 3 and accented * 2 >= len(words):
        return "a Latin-script language other than English"
    return None


def english_only(embedder_name: str) -> bool:
    """True for the packaged models (all-MiniLM-L6-v2, ONNX or torch): English-only."""
    return embedder_name.startswith("packaged:")


def language_step(query: str, embedder_name: str) -> TraceStep | None:
    """A ``language`` trace step when ``query`` does not read as English and the knowledge base
    embeds with an English-only packaged model; None otherwise (most searches: no step)."""
    if not english_only(embedder_name):
        return None
    start = time.perf_counter()
    language = query_language(query)
    if language is None:
        return None
    return TraceStep(
        stage="language",
        path="offline",
        ms=(time.perf_counter() - start) * 1000,
        note=f"the query reads as {language}; the embedding model ({embedder_name}) is English-only, so dense "
        "matching is weak: translate the request, or index with a multilingual embedder "
        "(ToolKnowledgeBase(embedder=...))",
    )
