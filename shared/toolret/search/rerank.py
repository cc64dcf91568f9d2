"""Reranking (post-retrieval): a second, slower look at the top candidates of a search.

MFTR scores every candidate field by field, cheaply; a reranker reads the query together with
each top candidate's full multi-field card (:meth:`~toolret.documents.tool_doc.ToolDoc.card`) and reorders
them (Toolshed §3.4.3). Two kinds, one contract (:class:`Reranker`): each takes the ranked list
and returns a reranked list plus one ``rerank`` :class:`~toolret.results.TraceStep`, and never
raises at search time — any failure returns the list unchanged with a ``fallback`` step saying why.

* :class:`CrossEncoderReranker` — any sentence-transformers ``CrossEncoder`` name or path the
  user has. No PyPI package carries trained cross-encoder weights, so there is no default one:
  offline, the MFTR ranking is the rerank. The new score blends the cross-encoder with MFTR.
* :class:`LLMReranker` — one structured LLM call, listwise (an order) or pointwise (0-10 per tool);
  it may also drop tools the model marks irrelevant. Its output is validated against the given
  candidates: an id the model invents is ignored (and counted in the trace), never returned.
  An LLM gives an order, not a calibrated score, so the reranked tools take the head's score
  values in descending order: the scale that ``k="auto"``'s margin is calibrated on stays, and
  each tool's own earlier score is kept in ``field_scores["before_rerank"]``.

Example:
    >>> from toolret.llm.testing import ScriptedLLM
    >>> tools = [ScoredTool(id="a", name="a", score=0.6), ScoredTool(id="b", name="b", score=0.5)]
    >>> llm = ScriptedLLM(['{"ranking": ["b", "a", "zz"], "irrelevant": []}'])
    >>> out, step = LLMReranker(llm).rerank("q", tools, {}, timeout=1.0)
    >>> [t.id for t in out], [t.score for t in out], step.path, step.note.endswith("ignored 1 unknown id(s)")
    (['b', 'a'], [0.6, 0.5], 'llm', True)
"""

from __future__ import annotations

import importlib.util
import logging
import math
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field, field_validator

from toolret.config import RetrievalConfig
from toolret.documents.tool_doc import FIELDS, ToolDoc
from toolret.errors import ConfigError, MissingDependencyError
from toolret.llm.protocol import LLM, ChatMessage, structured_call
from toolret.llm.steps import LLMSteps
from toolret.results import ScoredTool, StagePath, TraceStep
from toolret.search.auto_k import NOT_EVIDENCE

__all__ = [
    "CrossEncoderCache",
    "IRRELEVANT_BELOW",
    "CrossEncoderReranker",
    "LLMReranker",
    "ListwiseRanking",
    "PointwiseScores",
    "Reranker",
    "card_line",
]

logger = logging.getLogger("toolret")

#: How much of one tool card and of the query an LLM prompt carries.
MAX_CARD_CHARS = 1000
MAX_QUERY_CHARS = 2000
#: Most ids read from a model's answer (a confused model can list thousands).
MAX_IDS = 200
#: Pointwise: a score below this (i.e. 0 on the 0-10 scale, "cannot help") marks a tool irrelevant.
IRRELEVANT_BELOW = 1.0


@runtime_checkable
class Reranker(Protocol):
    """Reorders the head of a ranked list; returns the new list and one ``rerank`` trace step.

    Implementations never raise for a failing model: they return ``tools`` unchanged with a
    ``fallback`` step. ``docs`` maps tool ids to their documents (a missing one: name only).
    """

    name: str

    def rerank(
        self, query: str, tools: list[ScoredTool], docs: Mapping[str, ToolDoc], *, timeout: float
    ) -> tuple[list[ScoredTool], TraceStep]: ...


def card_line(tool_id: str, doc: ToolDoc | None, name: str = "") -> str:
    """The fields of :meth:`ToolDoc.card` on one line, led by the tool's id, for a prompt's data block.

    >>> card_line("w1", ToolDoc(name="get_weather", description="Weather now.", examples=["rain?", "sun?"]))
    'id: w1 | get_weather: Weather now. | examples: rain?; sun?'
    """
    parts = [f"id: {tool_id}", name or tool_id]
    if doc is not None:
        parts[1] = f"{doc.name}: {doc.description}"
        for field in FIELDS[1:]:  # parameters, response, examples: one "; "-joined segment each
            lines = [" ".join(line.split()) for line in doc.field_text(field).splitlines()]
            if any(lines):
                parts.append(f"{field}: " + "; ".join(line for line in lines if line))
    return " | ".join(" ".join(p.split()) for p in parts)[:MAX_CARD_CHARS]


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def _reason(exc: BaseException) -> str:
    text = str(exc) if isinstance(exc, _Unusable) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())[:200]


class _Unusable(Exception):
    """The model answered in the schema, but with nothing usable."""


class _Stage:
    """What both rerankers share: the head/tail split, timing, and the fallback rule."""

    name: str
    top_n: int

    def _fallback(
        self, tools: list[ScoredTool], exc: BaseException, start: float
    ) -> tuple[list[ScoredTool], TraceStep]:
        reason = _reason(exc)
        logger.warning("reranker %s failed, original order kept: %s", self.name, reason)
        return list(tools), TraceStep(
            stage="rerank", path="fallback", ms=_ms(start), note=f"{reason}; original order kept"
        )

    @staticmethod
    def _step(path: StagePath, start: float, note: str) -> TraceStep:
        return TraceStep(stage="rerank", path=path, ms=_ms(start), note=note)


class CrossEncoderReranker(_Stage):
    """Rescore the first ``top_n`` tools with a sentence-transformers ``CrossEncoder``.

    ``model`` is a CrossEncoder name or local path (loaded on first use; a local directory is
    loaded with ``local_files_only=True`` so no hub is contacted) or an already built model
    object with ``predict(pairs)``. Each (query, full tool card) pair gets a logit ``ce``; the
    new score is ``weight * sigmoid(ce) + (1 - weight) * score`` — the sigmoid puts the
    cross-encoder on MFTR's [0, 1] scale so the two can be blended. ``weight=1`` ranks by the
    cross-encoder alone; lower values keep some of the multi-field evidence. Tools after
    ``top_n`` keep their order and scores, after the rescored ones; choose ``top_n`` at least as
    large as the list handed in if a score-based cut (``k="auto"``) follows. ``sigmoid(ce)`` is
    kept in ``field_scores["cross_encoder"]``. The model runs locally, so ``timeout`` is not
    enforced: its cost is bounded by ``top_n``.

    >>> class Fake:  # a stand-in with CrossEncoder's predict(); real use: CrossEncoderReranker("path/or/name")
    ...     def predict(self, pairs, **kw):
    ...         return [len(card) % 3 - 1.0 for _, card in pairs]
    >>> tools = [ScoredTool(id=i, name=i, score=0.5) for i in ("abc", "ab")]
    >>> out, step = CrossEncoderReranker(Fake()).rerank("q", tools, {}, timeout=1.0)
    >>> [t.id for t in out], out[0].field_scores["cross_encoder"], step.path
    (['ab', 'abc'], 0.731059, 'offline')
    """

    def __init__(
        self,
        model: str | Any,
        *,
        top_n: int = 20,
        batch_size: int = 32,
        weight: float = 1.0,
        device: str | None = None,
    ) -> None:
        if top_n < 1 or batch_size < 1:
            raise ConfigError(f"top_n and batch_size must be at least 1, not {top_n} and {batch_size}")
        if not 0.0 <= weight <= 1.0:
            raise ConfigError(f"weight must lie in [0, 1], not {weight}")
        if (
            isinstance(model, str)
            and "sentence_transformers" not in sys.modules
            and importlib.util.find_spec("sentence_transformers") is None
        ):
            raise MissingDependencyError("sentence-transformers", extra="hub", purpose="cross-encoder reranking")
        label = model if isinstance(model, str) else type(model).__name__
        self.name = f"cross-encoder:{label}"
        self.top_n, self.batch_size, self.weight, self.device = top_n, batch_size, weight, device
        self._model_ref = model
        self._model: Any = None if isinstance(model, str) else model
        self._lock = threading.Lock()

    def load(self) -> Any:
        """The model, loaded on first call (a search calls this itself; call it to warm up)."""
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import CrossEncoder
                except ImportError as exc:
                    raise MissingDependencyError(
                        "sentence-transformers", extra="hub", purpose="cross-encoder reranking"
                    ) from exc
                kwargs: dict[str, Any] = {"device": self.device or "cpu"}
                if os.path.isdir(self._model_ref):
                    kwargs["local_files_only"] = True
                self._model = CrossEncoder(self._model_ref, **kwargs)
            return self._model

    def _logits(self, pairs: list[tuple[str, str]]) -> list[float]:
        model = self.load()
        kwargs: dict[str, Any] = {}
        st = sys.modules.get("sentence_transformers")
        if st is not None and isinstance(model, st.CrossEncoder):
            import torch  # a CrossEncoder applies its own sigmoid by default; ask for raw logits

            kwargs = {
                "batch_size": self.batch_size,
                "show_progress_bar": False,
                "activation_fn": torch.nn.Identity(),
                "convert_to_numpy": True,
            }
        raw = model.predict(pairs, **kwargs)
        values = [float(v) for v in (raw.reshape(-1) if hasattr(raw, "reshape") else raw)]
        if len(values) != len(pairs):
            raise ValueError(
                f"model returned {len(values)} score(s) for {len(pairs)} pair(s); expected a one-label cross-encoder"
            )
        if not all(math.isfinite(v) for v in values):
            raise ValueError("model returned NaN or infinite scores")
        return values

    def rerank(
        self, query: str, tools: list[ScoredTool], docs: Mapping[str, ToolDoc], *, timeout: float = 0.0
    ) -> tuple[list[ScoredTool], TraceStep]:
        start = time.perf_counter()
        if not tools:
            return [], self._step("skipped", start, "no candidates")
        head, tail = tools[: self.top_n], tools[self.top_n :]
        try:
            pairs = [(query, docs[t.id].card() if t.id in docs else t.name) for t in head]
            probs = [1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, v)))) for v in self._logits(pairs)]
        except Exception as exc:  # a failing model never fails a search  # noqa: BLE001
            return self._fallback(tools, exc, start)
        rescored = [
            t.model_copy(
                update={
                    "score": round(self.weight * p + (1.0 - self.weight) * t.score, 6),
                    **{part: round((1.0 - self.weight) * getattr(t, part), 6) for part in NOT_EVIDENCE},
                    "field_scores": {**t.field_scores, "cross_encoder": round(p, 6)},
                }
            )
            for t, p in zip(head, probs)
        ]
        rescored.sort(key=lambda t: -t.score)  # stable: ties keep the MFTR order
        note = f"{self.name}: top {len(head)} of {len(tools)} rescored (weight {self.weight:g})"
        return rescored + tail, self._step("offline", start, note)


def _as_ids(value: Any) -> Any:
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple)):
        return value  # let validation fail, so the model is asked again
    ids = [str(v).strip() for v in value if isinstance(v, (str, int)) and not isinstance(v, bool)]
    return [i for i in ids if i][:MAX_IDS]


class ListwiseRanking(BaseModel):
    """The listwise reranker's output schema."""

    ranking: list[str] = Field(description="tool ids, most useful first")
    irrelevant: list[str] = Field(default_factory=list, description="tool ids that cannot help at all")

    @field_validator("ranking", "irrelevant", mode="before")
    @classmethod
    def _clip_ids(cls, value: Any) -> Any:
        return _as_ids(value)


class PointwiseScores(BaseModel):
    """The pointwise reranker's output schema: scores are clamped to [0, 10], non-numbers dropped."""

    scores: dict[str, float] = Field(description="tool id -> relevance from 0 (cannot help) to 10")

    @field_validator("scores", mode="before")
    @classmethod
    def _clamp(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        out: dict[str, float] = {}
        for key, raw in list(value.items())[:MAX_IDS]:
            if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
                continue
            try:
                number = float(raw)
            except ValueError:
                continue
            if math.isfinite(number):
                out[str(key).strip()] = min(10.0, max(0.0, number))
        return out


class LLMReranker(_Stage):
    """Rerank the first ``top_n`` tools with one structured LLM call.

    ``mode="listwise"`` asks for an order (``{"ranking": [ids], "irrelevant": [ids]}``, the model
    sees all candidates at once and can weigh them against each other); ``"pointwise"`` asks for a
    0-10 score per tool (``{"scores": {id: score}}``; a score below :data:`IRRELEVANT_BELOW` marks
    it irrelevant). The query and every card go into delimited data blocks (:mod:`toolret.llm.prompts`).

    The answer is checked against the candidates: unknown ids are ignored (an id the model writes
    as a tool's unique *name* is accepted as that tool), tools the model left out keep their
    relative order after the ranked ones, and with ``drop_irrelevant`` the tools marked irrelevant
    are removed — but the list never shrinks below ``min_keep`` tools. Any failure (timeout,
    malformed output after ``retries``, no known id) keeps the original order (``fallback`` trace).
    ``steps`` (``RetrievalConfig.llm_steps``) overrides ``retries``, may make a malformed answer
    raise instead, and adds the deployment's selection instructions to the system prompt.
    """

    def __init__(
        self,
        llm: LLM,
        *,
        top_n: int = 10,
        mode: Literal["listwise", "pointwise"] = "listwise",
        drop_irrelevant: bool = True,
        min_keep: int = 1,
        retries: int = 1,
        steps: LLMSteps | None = None,
    ) -> None:
        if mode not in ("listwise", "pointwise"):
            raise ConfigError(f"mode must be 'listwise' or 'pointwise', not {mode!r}")
        if top_n < 1 or min_keep < 0 or retries < 0:
            raise ConfigError(f"need top_n >= 1, min_keep >= 0, retries >= 0 (got {top_n}, {min_keep}, {retries})")
        self.llm, self.top_n, self.mode = llm, top_n, mode
        self.steps = steps or LLMSteps()
        self.drop_irrelevant, self.min_keep, self.retries = drop_irrelevant, min_keep, self.steps.retries_or(retries)
        from toolret.llm.prompts import RERANK_POINTWISE_V1, RERANK_V1  # only with an LLM: not on every search's path

        self.template = RERANK_V1 if mode == "listwise" else RERANK_POINTWISE_V1
        self.schema: type[BaseModel] = ListwiseRanking if mode == "listwise" else PointwiseScores
        self.name = f"llm-{mode}:{getattr(llm, 'name', type(llm).__name__)}"

    def messages(self, query: str, head: Sequence[ScoredTool], docs: Mapping[str, ToolDoc]) -> list[ChatMessage]:
        """The prompt for ``head``: bounded, with the query and every card as data."""
        from toolret.llm.prompts import render

        cards = [card_line(t.id, docs.get(t.id), t.name) for t in head]
        return self.steps.instructed(render(self.template, query=query[:MAX_QUERY_CHARS], tools=cards))

    def _skip(self, tools: list[ScoredTool], start: float) -> tuple[list[ScoredTool], TraceStep] | None:
        if len(tools[: self.top_n]) >= 2 or (self.drop_irrelevant and len(tools) > self.min_keep):
            return None
        return list(tools), self._step("skipped", start, f"{len(tools)} candidate(s): nothing to rerank")

    def rerank(
        self, query: str, tools: list[ScoredTool], docs: Mapping[str, ToolDoc], *, timeout: float
    ) -> tuple[list[ScoredTool], TraceStep]:
        start = time.perf_counter()
        if (skipped := self._skip(tools, start)) is not None:
            return skipped
        try:
            out = structured_call(
                self.llm,
                self.messages(query, tools[: self.top_n], docs),
                self.schema,
                timeout=timeout,
                retries=self.retries,
            )
            return self._apply(tools, out, start)
        except Exception as exc:  # reranking never fails a search, unless steps.on_malformed says so  # noqa: BLE001
            self.steps.reraise(exc)
            return self._fallback(tools, exc, start)

    @staticmethod
    def _verdict(
        head: list[ScoredTool], out: ListwiseRanking | PointwiseScores
    ) -> tuple[list[str], set[str], set[str], dict[str, dict[str, float]]]:
        """(ranked ids, irrelevant ids, unknown ids, per-tool evidence) from a validated answer."""
        known = {t.id: t.id for t in head}
        names = Counter(t.name for t in head)  # a tool's unique name is accepted for its id
        known.update({t.name: t.id for t in head if names[t.name] == 1 and t.name not in known})
        raws = out.ranking + out.irrelevant if isinstance(out, ListwiseRanking) else list(out.scores)
        unknown = {raw for raw in raws if raw not in known}
        evidence: dict[str, dict[str, float]] = {}
        irrelevant: set[str] = set()
        if isinstance(out, ListwiseRanking):
            for tool_id in (known[raw] for raw in out.ranking if raw in known):
                evidence.setdefault(tool_id, {"llm_rank": float(len(evidence) + 1)})
            irrelevant = {known[raw] for raw in out.irrelevant if raw in known}
            order = list(evidence)
        else:
            for raw, score in out.scores.items():
                if raw in known and known[raw] not in evidence:
                    evidence[known[raw]] = {"llm": round(score / 10.0, 6)}
                    if score < IRRELEVANT_BELOW:
                        irrelevant.add(known[raw])
            position = {t.id: n for n, t in enumerate(head)}
            order = sorted(evidence, key=lambda i: (-evidence[i]["llm"], position[i]))
        if not order and not irrelevant:
            raise _Unusable(
                f"the answer named none of the {len(head)} given tools (ignored {len(unknown)} unknown id(s))"
            )
        return order, irrelevant, unknown, evidence

    def _apply(self, tools: list[ScoredTool], out: Any, start: float) -> tuple[list[ScoredTool], TraceStep]:
        head, tail = tools[: self.top_n], tools[self.top_n :]
        order, irrelevant, unknown, evidence = self._verdict(head, out)
        by_id, ranked = {t.id: t for t in head}, set(order)
        ordered = [by_id[i] for i in order] + [t for t in head if t.id not in ranked]
        drop = irrelevant if self.drop_irrelevant else set()
        room = max(0, self.min_keep - (len(ordered) - len(drop)) - len(tail))  # irrelevant ones kept for min_keep
        kept: list[ScoredTool] = []
        for tool in ordered:
            if tool.id in drop:
                if room == 0:
                    continue
                room -= 1
            kept.append(tool)
        values = sorted((t.score for t in head), reverse=True)
        # the n-th place keeps the n-th best score and its non-evidence parts, so k="auto" sees the same
        # evidence profile
        parts = [{p: getattr(t, p) for p in NOT_EVIDENCE} for t in sorted(head, key=lambda t: -t.score)]
        reranked = [
            t.model_copy(
                update={
                    "score": values[n],
                    **parts[n],
                    "field_scores": {**t.field_scores, **evidence.get(t.id, {}), "before_rerank": t.score},
                }
            )
            for n, t in enumerate(kept)
        ]
        note = (
            f"{self.mode} by {getattr(self.llm, 'name', type(self.llm).__name__)} ({self.template.id}): "
            f"{len(head)} reranked, {len(ordered) - len(kept)} dropped as irrelevant"
        )
        if len(ordered) > len(ranked):
            note += f", {len(ordered) - len(ranked)} not ranked by the model kept after"
        if unknown:
            note += f", ignored {len(unknown)} unknown id(s)"
        return reranked + tail, self._step("llm", start, note)


class CrossEncoderCache:
    """Cross-encoder rerankers loaded once per knowledge base, by (model, top_n, weight)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models: dict[tuple[str, int, float], CrossEncoderReranker] = {}

    def get(self, cfg: RetrievalConfig) -> CrossEncoderReranker | None:
        """The configured reranker (None when ``cfg`` asks for none or names no cross-encoder)."""
        if cfg.reranker == "none" or not cfg.cross_encoder:
            return None
        key = (cfg.cross_encoder, cfg.rerank.top_n, cfg.rerank.weight)
        with self._lock:
            if key not in self._models:
                self._models[key] = CrossEncoderReranker(
                    cfg.cross_encoder, top_n=cfg.rerank.top_n, weight=cfg.rerank.weight
                )
            return self._models[key]

    def __len__(self) -> int:
        return len(self._models)
