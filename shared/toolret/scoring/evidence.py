"""How much lexical evidence a query carries, measured against the registry it searches.

A request that spells out identifiers, argument values or words that are rare in the registry
("convert 30 EUR with forex_convert_v2") is best served by exact matching; a paraphrased need
("help me not get lost abroad") by the embedding. :func:`query_evidence` summarises the query
as a few numbers the fusion reads (:mod:`toolret.scoring.mftr`) to set its lexical/dense balance per
query. Everything here is unsupervised: document frequencies come from the registry's own
lexical index, nothing is fitted per registry.

Example:
    >>> ev = query_evidence("call get_user_by_id for 42", ["call", "get", "user", "id", "42"], {"user": 3}, 100)
    >>> ev.n_ident, ev.n_args
    (1, 1)
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["QueryEvidence", "query_evidence", "registry_df"]

_RAW_WORD = re.compile(r"[A-Za-z0-9_.\-/]+")
_CAMEL = re.compile(r"[a-z][A-Z]")
_ALNUM = re.compile(r"(?=.*[A-Za-z])(?=.*\d)")


@dataclass(frozen=True)
class QueryEvidence:
    """``idf_mass``: mean normalised IDF (in [0, 1]) of the query tokens the registry knows;
    ``oov_share``: share of query tokens no tool contains; ``n_args``: argument values spotted
    (:func:`toolret.scoring.arguments.spot_arguments`); ``n_ident``: identifier-like words
    (``snake_case``, ``camelCase``, ``dotted.names``, ``v2``)."""

    idf_mass: float
    oov_share: float
    n_args: int
    n_ident: int


def _is_identifier(word: str) -> bool:
    core = word.strip(".-/")
    if len(core) < 3:
        return False
    return "_" in core or "." in core or bool(_CAMEL.search(core)) or bool(_ALNUM.match(core))


def query_evidence(text: str, tokens: Sequence[str], df: Mapping[str, int], n_docs: int) -> QueryEvidence:
    """Evidence features of one query (``tokens``: the analysed query, as the lexical index sees it)."""
    from toolret.scoring.arguments import spot_arguments

    n_ident = sum(1 for w in _RAW_WORD.findall(text) if _is_identifier(w))
    n_args = len(spot_arguments(text))
    if not tokens or n_docs <= 0:
        return QueryEvidence(0.0, 0.0, n_args, n_ident)
    norm = math.log(n_docs + 1.0)
    idfs = []
    oov = 0
    for token in tokens:
        d = df.get(token, 0)
        if d <= 0:
            oov += 1
            continue
        idfs.append(math.log((n_docs - d + 0.5) / (d + 0.5) + 1.0) / norm)
    mass = sum(idfs) / len(idfs) if idfs else 0.0
    return QueryEvidence(min(max(mass, 0.0), 1.0), oov / len(tokens), n_args, n_ident)


def registry_df(snap: object) -> tuple[dict[str, int], int]:
    """Document frequencies of the registry's words (description field: name words + description)."""
    lexical = snap.lexical.get("description")  # type: ignore[attr-defined]
    return (lexical.doc_freq() if lexical is not None else {}), len(snap)  # type: ignore[arg-type]
