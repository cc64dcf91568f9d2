"""Nothing fits -> nothing: the floor under ``k="auto"``.

``k="auto"`` cuts a ranked list where its scores fall away from the best one; those scores are
z-scores over the request's own candidate pool, so a greeting ("hi there!") or a general question
("what is the capital of France?") still has a best tool that "stands out". Handing an agent that
tool costs tokens and invites a wrong call. The floor asks the question a relative score cannot:
does any chosen tool match the request at all? It reads each tool's
:attr:`~toolret.results.ScoredTool.similarity` (the best raw cosine between the request and any
of the tool's fields, comparable across requests) and, when even the best is below the floor,
returns no tools; the trace's ``floor`` step says so, with the numbers.

A cosine means something only for the model that produced it, so the floor is calibrated per
embedding model (:data:`CALIBRATED_FLOORS`): the highest value that keeps at least 99 % of
``k="auto"``'s recall on every dev set (200 sampled requests per set), measured with
``experiments/auto_floor.py`` (docs/decisions/2026-11-26-auto-floor.md). A model without a calibrated
value gets no floor (said in the trace) unless ``RetrievalConfig.auto_floor`` gives one.

Example:
    >>> from toolret import ScoredTool
    >>> tools = [ScoredTool(id="get_weather", name="get_weather", score=2.1, similarity=0.12)]
    >>> kept, step = apply_floor(tools, 0.3)
    >>> kept, step.note
    ([], 'best similarity 0.120 < floor 0.300: no tool fits the request, none returned')
"""

from __future__ import annotations

from collections.abc import Sequence

from toolret.config import RetrievalConfig
from toolret.results import ScoredTool, TraceStep

__all__ = ["CALIBRATED_FLOORS", "apply_floor", "floor_for"]

#: Embedding model name -> the calibrated floor of ``k="auto"`` (best raw cosine of the chosen set).
CALIBRATED_FLOORS: dict[str, float] = {}


def floor_for(config: RetrievalConfig, embedder_name: str) -> float | None:
    """The floor a ``k="auto"`` search applies: the config's number, or the model's calibrated one."""
    setting = config.auto_floor
    if setting == "calibrated":
        return CALIBRATED_FLOORS.get(embedder_name)
    return setting


def apply_floor(
    tools: Sequence[ScoredTool], floor: float | None, *, embedder_name: str = ""
) -> tuple[list[ScoredTool], TraceStep]:
    """``tools``, or none when the best similarity among them is below ``floor``; and the trace step."""
    tools = list(tools)
    if floor is None:
        note = f"no calibrated floor for {embedder_name!r}: the set is kept" if embedder_name else "no floor"
        return tools, TraceStep(stage="floor", path="skipped", ms=0.0, note=note)
    best = max((t.similarity for t in tools), default=0.0)
    if tools and best >= floor:
        return tools, TraceStep(
            stage="floor", path="offline", ms=0.0, note=f"best similarity {best:.3f} >= floor {floor:.3f}"
        )
    return [], TraceStep(
        stage="floor",
        path="offline",
        ms=0.0,
        note=f"best similarity {best:.3f} < floor {floor:.3f}: no tool fits the request, none returned",
    )
