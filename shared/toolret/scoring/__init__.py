"""Turning a query and a tool into a score: the MFTR formula over lexical and dense field signals
(``mftr``), the query's lexical evidence (``evidence``), argument spotting (``arguments``), the
parameter-missing penalty (``penalty``, over ``param_table`` with ``param_match``), the scored
candidates of one ranking (``ranked_candidates``), and candidate generation itself: per field BM25
∪ dense ∪ named tools, scored by MFTR (``candidates``).

Every name below is importable from this package (``from toolret.scoring import ...``); each
module is loaded on first use (:mod:`toolret._exports`).
"""

from __future__ import annotations

from toolret._exports import lazy_exports

_EXPORTS = {
    "Ranking": "candidates",
    "named_tools": "candidates",
    "rank_tools": "candidates",
    "top_n": "candidates",
    "ArgumentFit": "arguments",
    "CandidateScore": "ranked_candidates",
    "FEATURE_NAMES": "mftr",
    "FieldSignals": "mftr",
    "ParamTable": "param_table",
    "QueryEvidence": "evidence",
    "RankedCandidates": "ranked_candidates",
    "SpottedArgument": "arguments",
    "candidate_penalties": "penalty",
    "evidence_score": "mftr",
    "lexical_strength": "mftr",
    "normalize_field": "mftr",
    "param_satisfaction": "arguments",
    "parameter_penalty": "penalty",
    "pool_statistics": "mftr",
    "query_beta": "mftr",
    "query_evidence": "evidence",
    "registry_df": "evidence",
    "score_candidates": "mftr",
    "spot_arguments": "arguments",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
