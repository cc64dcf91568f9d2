"""The checks of ``toolret doctor``, each over a knowledge base's stored tools, each finding naming its tools.

* :func:`near_duplicates`: tools whose indexed descriptions (the name's words and the description,
  as the retriever embeds them) are so close that no score can tell them apart, or that say the same
  in the same words under another name; grouped, so a family (``os.spawnl``, ``os.spawnle``…) is one
  finding;
* :func:`descriptions`: an empty description (the model and the retriever see only the name), or a
  thin one (fewer than :data:`THIN_WORDS` words, or the name's words again);
* :func:`heavy_definitions`: a definition that costs many tokens every time it is bound;
* :func:`name_collisions`: one name under several ids (two sources' ``create_lead``): a model
  calls tools by name;
* :func:`offline_requests` and :func:`reach`: requests made from each tool's own documentation (its
  offline profile's purpose sentence, and its name with its required arguments), or an LLM's
  hypothetical questions where the knowledge base holds them, searched over the whole registry: the
  share of a tool's requests that rank it first.

Example:
    >>> from toolret.documents.tool_doc import ToolDoc, ToolParam
    >>> doc = ToolDoc(name="get_weather", description="Current weather for a city. Uses METAR.",
    ...               parameters=[ToolParam(name="city", type="string", required=True)])
    >>> offline_requests(doc)
    ['Current weather for a city.', 'get weather city']
    >>> [f.kind for f in descriptions([doc, ToolDoc(name="ping")])]
    ['empty_description']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from toolret.documents.text import first_sentence, humanize_name, split_identifier, tokenize
from toolret.documents.tool_doc import ToolDoc
from toolret.index.dense import rows_float32
from toolret.index.snapshot import Snapshot
from toolret.scope.tool_scope import SOURCE_KEYS

__all__ = [
    "ADVICE",
    "DUPLICATE_COSINE",
    "HEAVY_TOKENS",
    "REACH_SHARE",
    "THIN_WORDS",
    "Finding",
    "Reach",
    "descriptions",
    "heavy_definitions",
    "name_collisions",
    "near_duplicates",
    "offline_requests",
    "reach",
    "source_of",
]

Kind = Literal[
    "near_duplicate", "empty_description", "thin_description", "heavy_definition", "name_collision", "unreached"
]
#: How much each kind matters: ``high`` changes which tool a request gets, ``medium`` costs or weakens it.
SEVERITY: dict[str, str] = {
    "near_duplicate": "high",
    "empty_description": "high",
    "name_collision": "high",
    "unreached": "high",
    "thin_description": "medium",
    "heavy_definition": "medium",
}
#: What to do about each kind (said once per kind in the printed report, in every finding's JSON message).
ADVICE: dict[str, str] = {
    "near_duplicate": "say in each what sets it apart (its input, its output, when to use it), or merge them",
    "empty_description": "say what it does, what it needs and what it returns",
    "name_collision": "a model calls tools by name: namespace them (toolret's provider helpers spell them apart) "
    "or rename one",
    "unreached": "describe it in the words its users ask with, and what sets it apart from the tools ranked first",
    "thin_description": "say what it does and when to use it",
    "heavy_definition": "split it, or shorten what the model does not need (long descriptions, rarely used parameters)",
}
#: Cosine of two tools' indexed descriptions at or above which they are near-duplicates.
DUPLICATE_COSINE = 0.97
#: Share of content words two descriptions hold in common (of those either holds) that makes them the same
#: description; checked between tools at a cosine of at least ``CANDIDATE_COSINE`` (their names may differ).
SAME_WORDS = 0.95
CANDIDATE_COSINE = 0.85
#: A description of fewer words is thin.
THIN_WORDS = 5
#: A definition of this many tokens or more is heavy (OpenAI's compact JSON, as bound).
HEAVY_TOKENS = 1000
#: A tool whose own requests rank it first less often than this is unreached.
REACH_SHARE = 0.5


@dataclass(frozen=True)
class Finding:
    """One problem: its kind, the tools it is about (ids), what was found (``what``) and its figures."""

    kind: Kind
    tool_ids: list[str]
    what: str
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def severity(self) -> str:
        return SEVERITY[self.kind]

    @property
    def message(self) -> str:
        """What was found and what to do."""
        return f"{self.what}; {ADVICE[self.kind]}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "tool_ids": self.tool_ids,
            "message": self.message,
            "detail": self.detail,
        }


def source_of(doc: ToolDoc) -> str | None:
    """Where a tool came from: its MCP server, API or tool file (the scope's source keys), else its id's namespace."""
    for key in SOURCE_KEYS:
        value = doc.metadata.get(key)
        if value is not None:
            return str(value)
    return doc.id.split("/", 1)[0] if "/" in doc.id else None


# ---------------------------------------------------------------------------- near-duplicates
def near_duplicates(snap: Snapshot, threshold: float = DUPLICATE_COSINE, block: int = 2048) -> list[Finding]:
    """Groups of tools the retriever cannot tell apart, one finding a group: indexed descriptions at a cosine
    of at least ``threshold``, or the same description in other words' places (:data:`SAME_WORDS` of its
    content words shared, at a cosine of at least :data:`CANDIDATE_COSINE`: a copy under another name).
    Exact over every pair, ``block`` rows at a time."""
    field_name = "description"
    rows = snap.rows.get(field_name)
    if rows is None or len(rows) < 2:
        return []
    vectors = rows_float32(snap.vectors[field_name])
    words: dict[int, set[str]] = {}

    def same_words(i: int, j: int) -> bool:
        a, b = (words.setdefault(k, set(tokenize(snap.docs[int(rows[k])].description))) for k in (i, j))
        return bool(a and b) and len(a & b) / len(a | b) >= SAME_WORDS

    pairs: dict[tuple[int, int], float] = {}
    copies: set[tuple[int, int]] = set()
    for start in range(0, len(rows), block):
        sims = vectors[start : start + block] @ vectors.T
        for a, b in zip(*np.nonzero(sims >= min(threshold, CANDIDATE_COSINE))):
            i, j = start + int(a), int(b)
            if i >= j:
                continue
            cos = float(sims[a, b])
            if same_words(i, j):
                copies.add((i, j))
            elif cos < threshold:
                continue
            pairs[(i, j)] = cos
    return [_duplicate_finding(snap, rows, members, pairs, copies) for members in _groups(pairs)]


def _groups(pairs: dict[tuple[int, int], float]) -> list[list[int]]:
    """The connected groups of ``pairs``, each sorted, the closest group first."""
    parent: dict[int, int] = {}

    def root(i: int) -> int:
        parent.setdefault(i, i)
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in pairs:
        parent[root(i)] = root(j)
    groups: dict[int, list[int]] = {}
    for i in sorted(parent):
        groups.setdefault(root(i), []).append(i)
    best = {r: max(c for (i, _), c in pairs.items() if root(i) == r) for r in groups}
    return [groups[r] for r in sorted(groups, key=lambda r: (-best[r], groups[r]))]


def _duplicate_finding(
    snap: Snapshot,
    rows: np.ndarray,
    members: list[int],
    pairs: dict[tuple[int, int], float],
    copies: set[tuple[int, int]],
) -> Finding:
    docs = [snap.docs[int(rows[k])] for k in members]
    inside = {p: c for p, c in pairs.items() if p[0] in members}
    low, high = min(inside.values()), max(inside.values())
    copied = [[snap.docs[int(rows[i])].id, snap.docs[int(rows[j])].id] for i, j in sorted(copies & set(inside))]
    names = ", ".join(d.name for d in docs[:6]) + (f" and {len(docs) - 6} more" if len(docs) > 6 else "")
    how = f"{low:.3f}" if low == high else f"{low:.3f}-{high:.3f}"
    return Finding(
        "near_duplicate",
        [d.id for d in docs],
        f"{names}: indexed descriptions at cosine {how}" + (", some in the same words" if copied else ""),
        {"cosine_min": round(low, 4), "cosine_max": round(high, 4), "same_words": copied},
    )


# ---------------------------------------------------------------------------- descriptions and definitions
def description_words(doc: ToolDoc) -> int:
    return len(doc.description.split())


def descriptions(docs: Sequence[ToolDoc], thin: int = THIN_WORDS) -> list[Finding]:
    """An empty description, or a thin one (fewer than ``thin`` words, or only the name's words)."""
    out = []
    for doc in docs:
        words = doc.description.split()
        if not words:
            out.append(
                Finding(
                    "empty_description",
                    [doc.id],
                    f"{doc.name}: no description, the retriever and the model see only its name",
                )
            )
        elif len(words) < thin or split_identifier(doc.description) == split_identifier(doc.name):
            out.append(
                Finding(
                    "thin_description",
                    [doc.id],
                    f"{doc.name}: a {len(words)}-word description ({doc.description[:60]!r})",
                    {"words": len(words)},
                )
            )
    return out


def heavy_definitions(tokens: dict[str, int], docs: Sequence[ToolDoc], limit: int = HEAVY_TOKENS) -> list[Finding]:
    """Definitions of ``limit`` tokens or more (``tokens``: id -> tokens of its definition as bound)."""
    median = float(np.median(list(tokens.values()))) if tokens else 0.0
    out = []
    for doc in docs:
        n = tokens.get(doc.id, 0)
        if n >= limit:
            out.append(
                Finding(
                    "heavy_definition",
                    [doc.id],
                    f"{doc.name}: its definition costs {n:,} tokens each time it is bound ({len(doc.parameters)} "
                    f"parameters, a {description_words(doc)}-word description; the registry's median: {median:,.0f})",
                    {"tokens": n, "parameters": len(doc.parameters), "median_tokens": median},
                )
            )
    return out


def name_collisions(docs: Sequence[ToolDoc]) -> list[Finding]:
    """Names held by several tools (different ids, usually different sources)."""
    by_name: dict[str, list[ToolDoc]] = {}
    for doc in docs:
        by_name.setdefault(doc.name, []).append(doc)
    out = []
    for name, same in sorted(by_name.items()):
        if len(same) > 1:
            sources = [source_of(d) for d in same]
            shown = ", ".join(f"{d.id} ({s or 'no source'})" for d, s in zip(same, sources))
            out.append(
                Finding(
                    "name_collision",
                    [d.id for d in same],
                    f"{name}: {len(same)} tools share this name: {shown}",
                    {"name": name, "sources": sources},
                )
            )
    return out


# ---------------------------------------------------------------------------- reach
def offline_requests(doc: ToolDoc) -> list[str]:
    """Requests made from the tool's own documentation: its purpose sentence (the offline profile's
    ``function``), and its name's words with its required arguments'."""
    purpose = doc.expansion.function or first_sentence(doc.description)
    name = " ".join([humanize_name(doc.name), *(humanize_name(p.name) for p in doc.required_params)])
    return list(dict.fromkeys(q for q in (purpose, name) if q.strip()))


@dataclass(frozen=True)
class Reach:
    """How a tool's own requests rank it: how many there were, how many ranked it first, and which
    tools ranked first in its place (id -> times)."""

    requests: list[str]
    first: int
    taken_by: dict[str, int]

    @property
    def share(self) -> float | None:
        return self.first / len(self.requests) if self.requests else None


def reach(
    docs: Sequence[ToolDoc],
    requests: Callable[[ToolDoc], list[str]],
    top: Callable[[str], str | None],
    progress: Callable[[int], None] | None = None,
) -> dict[str, Reach]:
    """Each tool's :class:`Reach`: ``requests(doc)`` searched with ``top`` (a request -> the id ranked first)."""
    out: dict[str, Reach] = {}
    for doc in docs:
        asked = requests(doc)
        first, taken = 0, dict[str, int]()
        for request in asked:
            winner = top(request)
            if winner == doc.id:
                first += 1
            elif winner is not None:
                taken[winner] = taken.get(winner, 0) + 1
        out[doc.id] = Reach(asked, first, taken)
        if progress is not None:
            progress(1)
    return out


def unreached(docs: Sequence[ToolDoc], reached: dict[str, Reach], share: float = REACH_SHARE) -> list[Finding]:
    """Tools whose own requests rank them first less often than ``share`` (``detail`` names the tools ranked
    first instead)."""
    names = {d.id: d.name for d in docs}
    out = []
    for doc in docs:
        r = reached.get(doc.id)
        if r is None or r.share is None or r.share >= share:
            continue
        others = sorted(r.taken_by, key=lambda i: -r.taken_by[i])
        instead = ", ".join(names.get(i, i) for i in others[:3]) or "no tool"
        out.append(
            Finding(
                "unreached",
                [doc.id],
                f"{doc.name}: {r.first} of its {len(r.requests)} own requests rank it first ({instead} instead)",
                {"share": round(r.share, 3), "requests": r.requests, "ranked_first_instead": r.taken_by},
            )
        )
    return out
