"""The dependency stage: bring in the producer of a chosen tool's identifier the query cannot fill.

"Who was the lead actor in The Dark Knight?" ranks ``GET /movie/{movie_id}/credits`` first, but
that call needs a ``movie_id`` the request does not carry; the tool that turns the title into one
(``GET /search/movie``) is never named, so ranking alone leaves it out (docs/method.md section 10b).
After fusion, reranking and reflection, and before ``k="auto"``'s cut, this stage looks at the top
``depth`` tools; for each required identifier (:mod:`toolret.documents.identifiers`) that the
query does not itself carry, it adds that identifier's best producer by the query's own score,
right before its consumer, and marks it (``ScoredTool.serves`` = the consumer's id; a
``dependencies`` trace step names each pair). ``k="auto"`` then keeps a producer with its
consumer (:func:`keep_producers`). Nothing outside the snapshot is ever added and the list never
grows past k: the lowest tool that is not part of a pair makes room.

A query carries an identifier when a value stands right after the entity or an id word
("movie 550", "playlist id 37i9dQ", "#42") or looks like one on its own (six or more characters
with a digit: ``3TVXtAsR1Inumwj472S9r4``, a UUID); a title or a name ("The Dark Knight") is what
a producer turns into an identifier, not one.

Example:
    >>> from toolret.documents.identifiers import IdentifierNeed
    >>> need = IdentifierNeed(param="movie_id", type="integer", entity="movi", word="movie")
    >>> query_fills(need, "Who starred in The Dark Knight?"), query_fills(need, "credits of movie 550")
    (False, True)
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence

from toolret.config import DependencyConfig
from toolret.documents.identifiers import ID_WORDS, IdentifierNeed
from toolret.documents.text import split_identifier, tokenize
from toolret.documents.tool_doc import ToolParam
from toolret.index.snapshot import Snapshot
from toolret.results import ScoredTool, TraceStep
from toolret.scoring.arguments import ArgumentFit, spot_arguments
from toolret.scoring.ranked_candidates import CandidateScore, RankedCandidates
from toolret.search.fusion import scored_tool

__all__ = ["add_producers", "keep_producers", "query_fills", "resolve_dependencies"]

_TOKEN = re.compile(r"(?<![\w-])[A-Za-z0-9][\w-]{5,}(?![\w-])")
_DIGITS = re.compile(r"^[-+#]?\d+$")


def _ends_in_id(word: str) -> bool:
    """``id``, ``productId``, ``user_ids``: a word that names an identifier."""
    parts = split_identifier(word.strip("'\"`"))
    return bool(parts) and parts[-1] in ID_WORDS


def _id_shaped(token: str) -> bool:
    """Six or more characters, all digits or letters mixed with digits (not a date or a range)."""
    has_digit = any(c.isdigit() for c in token)
    return has_digit and (token.isdigit() or any(c.isalpha() for c in token))


_WORDS = re.compile(r"#|['\"`]?[\w.-]+['\"`]?")


def query_fills(need: IdentifierNeed, query: str) -> bool:
    """Does the query itself carry a value for ``need`` (so no producer is needed)?

    Yes when a token that looks like an identifier stands in the query on its own (six or more
    characters with a digit; digits only for a numeric id), or when a value with a digit (or a
    quoted one) follows the entity, the parameter's name or an id word within a few words
    ("movie 550", "building Id B1004", "'productId' is equal to 123").
    """
    numeric = need.type.split("|")[0].strip().lower() in ("integer", "number")
    for token in _TOKEN.findall(query):
        if _id_shaped(token) and (not numeric or token.isdigit()):
            return True
    words = _WORDS.findall(query)
    for i, word in enumerate(words):
        bare = word.lower().strip("'\"`")
        # After the entity ("movie 550") the value comes next; after an id word or the parameter's
        # own name ("building Id B1004", "'productId' is equal to 123") within a few words.
        if bare in (need.word, need.word + "s"):
            window = words[i + 1 : i + 2]
        elif bare in ("#", "number", "no", need.param.lower()) or _ends_in_id(word):
            window = words[i + 1 : i + 5]
        else:
            continue
        for value in window:
            text = value.strip("'\"`")
            if any(c.isdigit() for c in text) and (not numeric or _DIGITS.match(text)):
                return True
            if not numeric and value[:1] in "'\"`" and len(text) > 1:
                return True
    return False


def add_producers(
    tools: Sequence[ScoredTool],
    snap: Snapshot,
    query: str,
    pool: Mapping[int, CandidateScore],
    k: int,
    config: DependencyConfig,
) -> tuple[list[ScoredTool], list[str]]:
    """``tools`` with the producers of the top tools' unfilled identifiers; and one note per pair.

    ``pool`` is the query's scored candidates by tool index: a producer is chosen among those,
    by score. At most ``config.max_added`` tools are added and the list keeps at most ``k``.
    """
    index = snap.dependencies
    out = list(tools)
    if not index or not out:
        return out, []
    notes: list[str] = []
    added = 0
    fit: ArgumentFit | None = None

    def rank(p: int) -> tuple[bool, float]:
        # A request that names something ("The Dark Knight") needs the producer that looks a name up
        # (a required text parameter the name fills: search), not a list of the latest or popular.
        nonlocal fit
        if fit is None:
            fit = ArgumentFit(spot_arguments(query), set(tokenize(query, drop_stopwords=False)))
        named = any(a.kind in ("proper_noun", "quoted") for a in fit.args)
        return (named and _looks_up(snap.docs[p].parameters, fit), pool[p].score)

    for consumer in list(out[: config.depth]):
        if added >= config.max_added:
            break
        ci = snap.index_of.get(consumer.id)
        if ci is None:
            continue
        for need in index.needs[ci]:
            if config.path_only and not need.in_path:
                continue
            producers = [p for p in index.producers_of(need) if p in pool and p != ci]
            if not producers or query_fills(need, query):
                continue
            best = max(producers, key=rank)
            at = {t.id: i for i, t in enumerate(out)}
            pid = snap.docs[best].id
            if pid in at and at[pid] < at[consumer.id]:
                out[at[pid]] = out[at[pid]].model_copy(update={"serves": out[at[pid]].serves or consumer.id})
                notes.append(f"{pid} already before {consumer.id} ({need.param})")
                break
            if config.min_score is not None and pool[best].score < config.min_score:
                continue
            paired = sum(1 for t in out if _in_pair(t, out))
            paired += not _in_pair(out[at[consumer.id]], out)
            paired += not (pid in at and _in_pair(out[at[pid]], out))
            if paired > k:
                continue  # no room for this pair without breaking an earlier one
            if pid in at:
                del out[at[pid]]
            where = out.index(next(t for t in out if t.id == consumer.id))
            out.insert(
                where + (config.placement == "after"),
                scored_tool(snap, pool[best], consumer.subtask, serves=consumer.id),
            )
            notes.append(f"{pid} for {consumer.id} ({need.param})")
            added += 1
            break
    return _trim(out, k), notes


def _looks_up(params: Sequence[ToolParam], fit: ArgumentFit) -> bool:
    """Does the tool take a required text the query's named value fills (``query``, ``q``, ``name``)?"""
    return any(
        p.required
        and p.type.split("|")[0].strip().lower() == "string"
        and not p.enum
        and split_identifier(p.name)[-1:] != []
        and split_identifier(p.name)[-1] not in ID_WORDS
        and fit.satisfaction(p) >= 0.5
        for p in params
    )


def _in_pair(tool: ScoredTool, tools: Sequence[ScoredTool]) -> bool:
    """Is ``tool`` a producer whose consumer is listed, or a consumer whose producer is?"""
    return any(t.id == tool.serves for t in tools) or any(t.serves == tool.id for t in tools)


def _trim(tools: list[ScoredTool], k: int) -> list[ScoredTool]:
    """At most ``k`` tools: the lowest-placed ones outside a (producer, consumer) pair go first."""
    while len(tools) > k:
        drop = next((i for i in range(len(tools) - 1, -1, -1) if not _in_pair(tools[i], tools)), len(tools) - 1)
        del tools[drop]
    return tools


def keep_producers(chosen: Sequence[ScoredTool], tools: Sequence[ScoredTool], max_k: int) -> list[ScoredTool]:
    """``k="auto"``'s cut with every kept consumer's producer added back, in list order, at most ``max_k``.

    A tool kept on its own score whose consumer was cut no longer says it serves it: ``serves``
    always names a tool in the same list.
    """
    keep = {t.id for t in chosen}
    keep.update(t.id for t in tools if t.serves is not None and t.serves in keep)
    kept = _trim([t for t in tools if t.id in keep], max_k)
    ids = {t.id for t in kept}
    return [t if t.serves is None or t.serves in ids else t.model_copy(update={"serves": None}) for t in kept]


def resolve_dependencies(
    snap: Snapshot,
    query: str,
    tools: Sequence[ScoredTool],
    pool: RankedCandidates,
    k: int,
    config: DependencyConfig,
) -> tuple[list[ScoredTool], TraceStep]:
    """:func:`add_producers` over a search's first ranking, with its ``dependencies`` trace step."""
    start = time.perf_counter()
    out, notes = add_producers(tools, snap, query, pool.by_tool(), k, config)
    note = "; ".join(notes) if notes else "no unfilled identifier with a producer"
    return out, TraceStep(stage="dependencies", path="offline", ms=(time.perf_counter() - start) * 1000, note=note)
