"""Nothing fits -> nothing: the floor under ``k="auto"``.

``k="auto"`` cuts a ranked list where its scores fall away from the best one; those scores are
z-scores over the request's own candidate pool, so a greeting ("hi there!") or a general question
("what is the capital of France?") still has a best tool that "stands out". Handing an agent that
tool costs tokens and invites a wrong call. The floor asks what a relative score cannot: does the
request want a tool at all? Two signals, both absolute (comparable across requests):

* **chit-chat likeness**: the request's cosine with the nearest of :data:`NULL_PROTOTYPES`
  (greetings, thanks, small talk, general-knowledge and opinion questions no tool registry
  serves) against its cosine with the best chosen tool (:attr:`~toolret.results.ScoredTool.similarity`).
  When the request reads more like chit-chat than like its best tool by more than ``margin``, no
  tool fits;
* **unknown words**: when (nearly) every content word of the request is absent from the
  registry's tool descriptions (``oov_share``; a request of stopwords only counts as all unknown)
  and even the best tool matches weakly (below ``weak_similarity``), no tool fits.

Either returns no tools; the trace's ``floor`` step gives the numbers (never a tool's name).

A cosine means something only for the model that produced it, so the settings are calibrated per
embedding model (:data:`CALIBRATED`) on natural requests: each dev set's own requests are in scope
of its registry, the intent sets' requests (banking, assistant, voice-command registries) are out
of scope of each other's, and greetings and general questions of no registry's are off-topic. The
setting chosen empties the most off-topic and out-of-scope requests while emptying almost none of
any set's in-scope ones, checked by leaving each registry out (``experiments/auto_floor.py``; the
figures and the choice: docs/decisions/2026-11-27-auto-floor-natural-requests.md). A model without
calibrated settings gets no floor: the trace says so, and its first ``k="auto"`` search warns.

Example:
    >>> floor = FloorSettings(margin=0.2, oov_share=0.9, weak_similarity=0.3)
    >>> floor.empties(best=0.21, null=0.55, oov=0.5), floor.empties(best=0.52, null=0.40, oov=0.0)
    (True, False)
"""

from __future__ import annotations

import logging
import threading
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolret.config import RetrievalConfig
from toolret.index.embedding import SHIPPED_EMBEDDER_NAME
from toolret.index.framework_embedding import embed_queries
from toolret.index.lexical import analyze_query
from toolret.index.onnx_embedding import ONNX_EMBEDDER_NAME
from toolret.index.snapshot import Snapshot
from toolret.results import ScoredTool, TraceStep
from toolret.scoring.evidence import query_evidence, registry_df

__all__ = ["CALIBRATED", "NULL_PROTOTYPES", "FloorSettings", "apply_floor", "floor_for", "floor_signals"]

#: Requests no tool registry serves, the anchors of "chit-chat likeness". Written for the floor;
#: the off-topic requests it is measured on (``experiments/auto_floor.py``) are other sentences.
NULL_PROTOTYPES: tuple[str, ...] = (
    "hey",
    "hiya, what's up?",
    "good evening to you",
    "howdy",
    "thanks!",
    "much appreciated",
    "great, thank you",
    "alright",
    "sounds good",
    "haha",
    "goodbye",
    "take care",
    "how's it going?",
    "nice to meet you",
    "what are you?",
    "are you human?",
    "what is your purpose?",
    "I'm feeling lonely",
    "you're awesome",
    "I don't understand",
    "please repeat that",
    "oops",
    "what is the tallest mountain in the world?",
    "who painted the Mona Lisa?",
    "when did World War II end?",
    "what causes rain?",
    "how does gravity work?",
    "what is the speed of light?",
    "who invented the telephone?",
    "what is democracy?",
    "define the word serendipity",
    "tell me something interesting",
    "say something funny",
    "compose a haiku about the sea",
    "what's your opinion on modern art?",
    "do you prefer summer or winter?",
    "what happens after we die?",
    "how can I be happier?",
    "what is the best way to learn?",
    "explain quantum physics simply",
    # Trivia: without these, "what's the capital of France?" in a small registry reads as near its
    # best tool as any chit-chat (docs/decisions/2026-11-27-auto-floor-natural-requests.md).
    "what is the capital of Australia?",
    "what is the population of Japan?",
    "how many bones are in the human body?",
    "what is the largest country in the world?",
    "who was Albert Einstein?",
    "in what year did the Titanic sink?",
    "what is the chemical symbol for gold?",
    "how many players are on a soccer team?",
    "who composed the Moonlight Sonata?",
    "why do leaves change colour in autumn?",
    "what does DNA stand for?",
    "who was Napoleon?",
    "how do volcanoes form?",
)


@dataclass(frozen=True)
class FloorSettings:
    """When ``k="auto"`` returns nothing (see the module doc): chit-chat likeness above the best tool's
    similarity by more than ``margin`` (None: never), or unknown words (share >= ``oov_share``) with a
    best tool below ``weak_similarity``."""

    margin: float | None
    oov_share: float
    weak_similarity: float

    def empties(self, *, best: float, null: float, oov: float) -> bool:
        """Does a request with these signals get no tools?"""
        chit_chat = self.margin is not None and null - best > self.margin
        return chit_chat or (oov >= self.oov_share and best < self.weak_similarity)


#: Embedding model name -> its calibrated floor (docs/decisions/2026-11-27-auto-floor-natural-requests.md).
CALIBRATED: dict[str, FloorSettings] = {
    SHIPPED_EMBEDDER_NAME: FloorSettings(margin=0.24, oov_share=0.5, weak_similarity=0.175),
    ONNX_EMBEDDER_NAME: FloorSettings(margin=0.36, oov_share=0.5, weak_similarity=0.075),
}

logger = logging.getLogger("toolret")

_LOCK = threading.Lock()
#: Models :func:`warn_no_floor` has warned about in this process.
_WARNED: set[str] = set()
_PROTOTYPES: dict[str, np.ndarray] = {}


def _prototypes(embedder: Any) -> np.ndarray:
    """:data:`NULL_PROTOTYPES` embedded as queries by ``embedder`` (once per process and model)."""
    with _LOCK:
        if embedder.name not in _PROTOTYPES:
            _PROTOTYPES[embedder.name] = embed_queries(embedder, list(NULL_PROTOTYPES))
        return _PROTOTYPES[embedder.name]


def floor_for(config: RetrievalConfig, embedder_name: str) -> FloorSettings | None:
    """The floor a ``k="auto"`` search applies: the model's calibrated one (None: off, or none calibrated)."""
    return CALIBRATED.get(embedder_name) if config.auto_k.floor == "calibrated" else None


def floor_signals(
    query: str, tools: Sequence[ScoredTool], snap: Snapshot, embedder: Any, qvec: np.ndarray | None = None
) -> tuple[float, float, float]:
    """``(best, null, oov)`` of a request: its best chosen tool's similarity, its chit-chat likeness (its
    cosine with the nearest prototype), and the share of its content words no tool description holds
    (1.0 for a request of stopwords only). ``qvec``: the request's query vector when the search
    already has it (else it is embedded here)."""
    best = max((t.similarity for t in tools), default=0.0)
    if qvec is None:
        qvec = embed_queries(embedder, [query])[0]
    null = float(np.max(_prototypes(embedder) @ qvec))
    tokens = analyze_query(query)
    oov = query_evidence(query, tokens, *registry_df(snap)).oov_share if tokens else 1.0
    return best, null, oov


def warn_no_floor(model: str) -> None:
    """Say once per process and model (a Python warning and the ``toolret`` logger) that ``k="auto"``
    runs without a floor: a framework or custom embedder has no calibrated settings, so a greeting
    still gets tools. Silence is the failure to avoid; ``auto_k.floor=None`` is the way to accept it."""
    with _LOCK:
        if model in _WARNED:
            return
        _WARNED.add(model)
    message = (
        f"k='auto' has no relevance floor for the embedding model {model!r}: the floor is calibrated per "
        "embedding model and only toolret's packaged models have one, so a request no tool serves (a greeting, "
        "a general question) still gets tools. Register settings measured for this model in "
        "toolret.search.relevance_floor.CALIBRATED (docs/method.md section 10), or pass "
        "RetrievalConfig(auto_k={'floor': None}) to run k='auto' without a floor on purpose"
    )
    logger.warning(message)
    warnings.warn(message, UserWarning, stacklevel=2)


def apply_floor(
    tools: Sequence[ScoredTool],
    settings: FloorSettings | None,
    *,
    query: str,
    snap: Snapshot,
    embedder: Any,
    qvec: np.ndarray | None = None,
    requested: bool = False,
) -> tuple[list[ScoredTool], TraceStep]:
    """``tools``, or none when the request wants no tool (``settings``' rule); and the trace step.
    ``requested``: the configuration asks for a floor, so a model without one is warned about."""
    tools = list(tools)
    if settings is None or not tools:
        if settings is None and requested:
            warn_no_floor(embedder.name)
        note = "off" if not tools else f"no calibrated floor for {embedder.name!r}: the set is kept"
        return tools, TraceStep(stage="floor", path="skipped", ms=0.0, note=note)
    start = time.perf_counter()
    best, null, oov = floor_signals(query, tools, snap, embedder, qvec)
    empty = settings.empties(best=best, null=null, oov=oov)
    note = f"best tool similarity {best:.3f}, chit-chat likeness {null:.3f}, unknown words {oov:.0%}" + (
        ": no tool fits the request, none returned" if empty else ": kept"
    )
    ms = (time.perf_counter() - start) * 1000
    return ([] if empty else tools), TraceStep(stage="floor", path="offline", ms=ms, note=note)
