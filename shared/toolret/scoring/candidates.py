"""Ranking one query against a knowledge-base snapshot: candidates, then MFTR scores.

Candidate generation takes, per field, the BM25 top-N and the dense top-N plus every tool the
query names exactly; only those candidates are scored (:mod:`toolret.scoring.mftr`).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from toolret.config import LearnedWeights, RetrievalConfig
from toolret.documents.text import tokenize
from toolret.index.blas import one_blas_thread
from toolret.index.dense import dense_search
from toolret.index.lexical import analyze_query
from toolret.index.snapshot import Snapshot
from toolret.scoring.arguments import spot_arguments
from toolret.scoring.evidence import query_evidence, registry_df
from toolret.scoring.intent import INTENT_FIELDS, intent_field_texts, intent_text
from toolret.scoring.mftr import FieldSignals, evidence_score, lexical_strength, score_candidates
from toolret.scoring.ranked_candidates import RankedCandidates

__all__ = [
    "Ranking",
    "field_tokens",
    "named_tools",
    "query_fields",
    "rank_tools",
    "ranking_inputs",
    "top_n",
    "word_fields",
]

_QUERY_WORDS = re.compile(r"[\w.]+", re.UNICODE)


def top_n(scores: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    valid = np.flatnonzero(mask & (scores > 0))
    if len(valid) <= n:
        return valid
    part = np.argpartition(-scores[valid], n - 1)[:n]
    return valid[part]


def named_tools(snap: Snapshot, query: str) -> set[int]:
    """Tools whose exact name (or its words, for multi-word names) appears in the query.

    A name made only of stopwords (``the``, ``please_help_me``) names nothing: otherwise a tool
    could earn the name-match boost on every request that contains those words.
    """
    if not snap.names:
        return set()
    lowered = query.lower()
    keys: list[str] = [token.strip(".") for token in _QUERY_WORDS.findall(lowered)]
    words = tokenize(lowered, drop_stopwords=False)
    for size in range(2, 6):
        keys.extend(" ".join(words[start : start + size]) for start in range(len(words) - size + 1))
    keys.append(lowered.strip())
    hits: set[int] = set()
    for key in keys:
        if key in snap.names and tokenize(key):
            hits.update(snap.names[key])
    return hits


class Ranking(NamedTuple):
    """One MFTR ranking of a query: its candidates best first, how many were scored, and how many
    argument values the query carries (the trace reports both)."""

    candidates: RankedCandidates
    n_candidates: int
    n_args: int
    #: The strength of the best word match the lexical share followed (mftr.lexical_strength).
    strength: float = 0.0
    #: The text the intent fields' BM25 matched in place of the query (:func:`word_fields`); None: the query.
    words: str | None = None


def query_fields(config: RetrievalConfig, text: str, explicit: dict[str, str] | None = None) -> dict[str, str]:
    """The per-field query texts of one ranking of ``text`` that the caller embeds: ``explicit`` ones (an LLM
    plan's field-aligned sub-queries), plus, with ``config.intent_without_arguments == "all"``, the request
    without its argument values for every other field but parameters (:mod:`toolret.scoring.intent`)."""
    if config.intent_without_arguments != "all":
        return dict(explicit or {})
    return intent_field_texts(text, explicit)


def word_fields(config: RetrievalConfig, text: str, own: Collection[str] = ()) -> dict[str, str]:
    """Per field, the text BM25 matches in place of ``text`` under the default ``intent_without_arguments ==
    "words"``: the request without its argument values, for every intent field that has no query of its own
    (``own``); ``{}`` when the request carries no value.

    Only the words move: the embedder still reads the whole request, where a value is read in its
    sentence ("a playlist named 'Love Mariah'"). A value's words, matched one by one, are accidents
    ("report_2024.csv" and the csv module). Measured on the dev sets: docs/method.md §3a.
    """
    if config.intent_without_arguments != "words":
        return {}
    intent = intent_text(text)
    if intent is None:
        return {}
    return {f: intent for f in INTENT_FIELDS if f not in own}


def field_tokens(
    config: RetrievalConfig,
    text: str,
    main_tokens: list[str],
    fields: Sequence[str],
    field_queries: Mapping[str, tuple[str, object]],
) -> tuple[dict[str, list[str]], str | None]:
    """The analysed words BM25 matches in each of ``fields``: a field's own query's (``field_queries``),
    else the request's without its argument values (:func:`word_fields`), else the request's
    (``main_tokens``); and that argument-free text, None when unused. The engine
    (:func:`rank_tools`) and the dev-set signal cache (:mod:`toolret.eval.signals`) both read it."""
    words = word_fields(config, text, field_queries)
    word_text = next(iter(words.values()), None)
    word_tokens = analyze_query(word_text) if word_text is not None else main_tokens
    tokens = {
        f: analyze_query(field_queries[f][0]) if f in field_queries else word_tokens if f in words else main_tokens
        for f in fields
    }
    return tokens, word_text


def ranking_inputs(
    embedder: object, config: RetrievalConfig, texts: list[str], dim: int = 0
) -> list[tuple[np.ndarray, dict[str, tuple[str, np.ndarray]] | None]]:
    """For each unplanned query text, its vector and its field queries (:func:`query_fields`), all embedded
    in one batch: what :func:`rank_tools` takes beside the text."""
    from toolret.index.framework_embedding import embed_queries

    per = [query_fields(config, t) for t in texts]
    batch = list(dict.fromkeys([*texts, *(t for ft in per for t in ft.values())]))
    vectors = embed_queries(embedder, batch, dim)
    row = {t: i for i, t in enumerate(batch)}
    return [
        (vectors[row[t]], {f: (ft_text, vectors[row[ft_text]]) for f, ft_text in ft.items()} or None)
        for t, ft in zip(texts, per)
    ]


def rank_tools(
    snap: Snapshot,
    text: str,
    qvec: np.ndarray,
    config: RetrievalConfig,
    field_queries: dict[str, tuple[str, np.ndarray]] | None = None,
    history: dict[int, float] | None = None,
    timings: dict[str, float] | None = None,
    allowed: np.ndarray | None = None,
    learned: LearnedWeights | None = None,
    strength: float | None = None,
) -> Ranking:
    """MFTR ranking of one query (a :class:`Ranking`).

    ``field_queries`` maps a field to its own (text, vector) — MFTR's field-aligned
    sub-queries, e.g. the expected output matched against responses; fields without one
    use ``text`` and ``qvec`` (their BM25, ``text`` without its argument values: :func:`word_fields`).
    Argument spotting always reads ``text``. ``timings``, when
    given, gets the milliseconds of each half added to its ``"candidates"`` and ``"mftr"``
    entries, so the trace reports what each stage took (not a share of the total). ``allowed``
    (a boolean per tool, or None for all) keeps every other tool out of the candidates: the
    ``n`` per field are the best allowed ones, not the best of all cut down afterwards.
    ``strength``: the strength of the best word match to weigh words and meaning by (a sub-task
    takes its whole request's, :func:`toolret.search.stages.stage_retrieve`); None reads this text's.
    """
    start = time.perf_counter()
    field_queries = field_queries or {}
    fields = config.active_fields
    main_tokens = analyze_query(text)
    tokens, word_text = field_tokens(config, text, main_tokens, fields, field_queries)
    vectors = {f: field_queries[f][1] if f in field_queries else qvec for f in fields}
    n = config.candidates_per_field
    lex_all = {f: snap.lexical[f].scores(tokens[f]) for f in fields}
    with one_blas_thread():  # small products: threads only add wake-up latency (toolret.index.blas)
        dense = {f: dense_search(snap, f, vectors[f], n, allowed) for f in fields}
    named = named_tools(snap, text)
    pool: set[int] = set(named) | set(history or ())
    if allowed is not None:
        named = {i for i in named if allowed[i]}
        pool = {i for i in pool if allowed[i]}
    for f in fields:
        mask = snap.present[f] if allowed is None else snap.present[f] & allowed
        pool.update(top_n(lex_all[f], mask, n).tolist())
        pool.update(dense[f].top.tolist())
    cands = np.array(sorted(pool), dtype=np.int64)
    scoring_start = time.perf_counter()
    args = spot_arguments(text)
    evidence = 0.0
    request = (0.0, 0.0, 0.0, 0.0)
    learned_fusion = config.fusion.method == "learned"
    if config.fusion.evidence_slope or learned_fusion:
        ev = query_evidence(text, main_tokens, *registry_df(snap))
        evidence = float(evidence_score(ev.oov_share, ev.n_ident))
        request = (ev.idf_mass, ev.oov_share, float(ev.n_ident), float(len(main_tokens)))
    hub_desc = snap.hubness.get("description") if learned_fusion else None
    signals = FieldSignals(
        candidates=cands,
        lexical={f: lex_all[f][cands] for f in fields},
        lexical_bound={f: snap.lexical[f].upper_bound(tokens[f]) for f in fields},
        dense={f: dense[f].at(cands) for f in fields},
        present={f: snap.present[f][cands] for f in fields},
        evidence=evidence,
        hubness={f: snap.hubness[f][cands] for f in fields if config.fusion.hubness_weight and f in snap.hubness},
        request=request,
        n_tools=len(snap),
        hub_description=hub_desc[cands] if hub_desc is not None else None,
    )
    if strength is None:
        strength = lexical_strength(signals)
    signals = dataclasses.replace(signals, strength=strength)
    query_words = set(tokenize(text, drop_stopwords=False))
    whole = text.strip().lower()
    exact = {i for i in named if whole in (snap.docs[i].name.lower(), snap.docs[i].id.lower())}
    ranked = score_candidates(
        signals,
        snap.docs,
        config,
        args=args,
        query_words=query_words,
        name_matches=named,
        exact_matches=exact,
        history=history,
        params=snap.params,
        learned=learned,
    )
    if timings is not None:
        end = time.perf_counter()
        timings["candidates"] = timings.get("candidates", 0.0) + (scoring_start - start) * 1000
        timings["mftr"] = timings.get("mftr", 0.0) + (end - scoring_start) * 1000
    return Ranking(ranked, len(cands), len(args), strength, word_text)
