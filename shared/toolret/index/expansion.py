"""Pre-retrieval document expansion: fix under-specified tool docs once, at indexing time.

About 40 % of public tool docs lack a clear statement of what the tool does (Tool-DE's audit).
toolret derives extra fields from each tool's own documentation and indexes each on its own
(``profile``, ``questions``, ``topics``; see :data:`toolret.documents.tool_doc.EXPANSION_FIELDS`); the
documentation itself is never changed.

* :func:`expand_offline` (on by default, no model): the first sentence of the description as
  ``function``, keywords from the tool's and its parameters' names (plus OpenAPI tags and the
  category, when the metadata has them) as ``tags``.
* :class:`LLMExpander`: a model writes the profile (``function``, ``tags``, ``when_to_use``,
  ``limitations``), ``hypothetical_questions``, ``key_topics`` and, for a missing response or
  examples, inferred versions. A faithfulness judge checks each field against the original
  document; unfaithful fields are regenerated once, then dropped. Results are cached on disk by
  (the tool's source hash, model, prompt versions), so re-indexing an unchanged registry makes no
  LLM call. Generation is async with a concurrency limit; :class:`ExpansionReport` sums it up.

``ToolExpansion.sources`` records where every value came from.

Example:
    >>> from toolret.documents.tool_doc import ToolDoc, ToolParam
    >>> doc = ToolDoc(name="getCityWeather", description="Current weather for a city. Uses METAR data.",
    ...               parameters=[ToolParam(name="city_name", type="string", required=True)])
    >>> e = expand_offline(doc).expansion
    >>> e.function, e.tags, e.sources["function"], e.card["example"]
    ('Current weather for a city.', ['city', 'weather', 'name'], 'offline:first_sentence', {'name': 'getCityWeather', 'arguments': {'city_name': '<city_name>'}})
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from toolret.cards.offline import offline_card
from toolret.documents.text import first_sentence, split_identifier, tokenize
from toolret.documents.tool_doc import ToolDoc, ToolExpansion
from toolret.llm.prompts import EXPAND_V1, JUDGE_V1, render
from toolret.llm.protocol import LLM, astructured_call

__all__ = [
    "GENERATED_FIELDS",
    "ExpansionCache",
    "ExpansionOutput",
    "ExpansionReport",
    "FaithfulnessVerdict",
    "LLMExpander",
    "expand_offline",
]

logger = logging.getLogger("toolret")

#: The fields an LLM writes; the judge may reject any of them.
GENERATED_FIELDS: tuple[str, ...] = (
    "function",
    "tags",
    "when_to_use",
    "limitations",
    "hypothetical_questions",
    "key_topics",
    "inferred_response",
    "inferred_examples",
)
_FUNCTION_WORDS = 20
_MAX_TAGS = 8
_MAX_TEXT = 600
_MAX_ITEMS = 10


def _keywords(doc: ToolDoc) -> list[str]:
    """Lowercase content words of the tool's name, its parameter names, and metadata tags/category."""
    raw: list[str] = []
    raw += split_identifier(doc.name)
    for param in doc.parameters:
        raw += split_identifier(param.name)
    meta_tags = doc.metadata.get("tags")
    if isinstance(meta_tags, (list, tuple)):
        raw += [str(t) for t in meta_tags if isinstance(t, (str, int))]
    category = doc.metadata.get("category")
    if isinstance(category, str):
        raw.append(category)
    out: list[str] = []
    for word in raw:
        for token in tokenize(word):
            if len(token) > 1 and not token.isdigit() and token not in out:
                out.append(token)
    return out[:_MAX_TAGS]


def expand_offline(doc: ToolDoc) -> ToolDoc:
    """``doc`` with the offline profile filled in where its expansion has nothing yet.

    ``function``: the description's first sentence (no description, no function — the name's
    words are already in the description field). ``tags``: :func:`_keywords`. ``card``: the
    offline condensed card (:func:`toolret.cards.offline.offline_card`). Values already there are kept.
    """
    exp = doc.expansion
    update: dict[str, Any] = {}
    sources = dict(exp.sources)
    if not exp.function and doc.description:
        update["function"] = first_sentence(doc.description)
        sources["function"] = "offline:first_sentence"
    if not exp.tags:
        tags = _keywords(doc)
        if tags:
            update["tags"] = tags
            sources["tags"] = "offline:names"
    if exp.card is None:
        update["card"] = offline_card(doc).model_dump()
        sources["card"] = "offline:card"
    if not update:
        return doc
    update["sources"] = sources
    return doc.model_copy(update={"expansion": exp.model_copy(update=update)})


# ---------------------------------------------------------------------------- LLM expansion
def _clip_text(value: Any) -> str:
    return " ".join(str(value).split())[:_MAX_TEXT] if isinstance(value, (str, int, float)) else ""


class ExpansionOutput(BaseModel):
    """What the expansion prompt asks for; sizes are bounded so a confused model cannot flood the index."""

    model_config = ConfigDict(extra="ignore")

    function: str = ""
    tags: list[str] = Field(default_factory=list)
    when_to_use: str = ""
    limitations: str = ""
    hypothetical_questions: list[str] = Field(default_factory=list)
    key_topics: list[str] = Field(default_factory=list)
    inferred_response: str = ""
    inferred_examples: list[str] = Field(default_factory=list)

    @field_validator("function", "when_to_use", "limitations", "inferred_response", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str:
        return _clip_text(value) if value is not None else ""

    @field_validator("tags", "hypothetical_questions", "key_topics", "inferred_examples", mode="before")
    @classmethod
    def _items(cls, value: Any) -> list[str]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)):
            return []
        items = [_clip_text(v) for v in value]
        return list(dict.fromkeys(i for i in items if i))[:_MAX_ITEMS]


class FaithfulnessVerdict(BaseModel):
    """The judge's answer: which generated fields the original documentation does not support."""

    model_config = ConfigDict(extra="ignore")

    unfaithful: list[str] = Field(default_factory=list)
    reasons: dict[str, str] = Field(default_factory=dict)

    @field_validator("unfaithful", mode="before")
    @classmethod
    def _known(cls, value: Any) -> list[str]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)):
            return []
        return [v for v in value if isinstance(v, str) and v in GENERATED_FIELDS]

    @field_validator("reasons", mode="before")
    @classmethod
    def _reasons(cls, value: Any) -> dict[str, str]:
        return {str(k): _clip_text(v) for k, v in value.items()} if isinstance(value, dict) else {}


class ExpansionReport(BaseModel):
    """The cost and outcome of one expansion run."""

    tools: int = 0
    cached: int = 0
    generated: int = 0
    failed: int = 0
    llm_calls: int = 0
    regenerated_fields: int = 0
    dropped_fields: int = 0
    seconds: float = 0.0
    prompt_chars: int = 0
    answer_chars: int = 0

    def summary(self) -> str:
        return (
            f"expanded {self.tools} tool(s): {self.cached} from cache, {self.generated} generated, "
            f"{self.failed} failed; {self.llm_calls} LLM call(s), {self.regenerated_fields} field(s) "
            f"regenerated, {self.dropped_fields} dropped; {self.seconds:.1f} s; "
            f"~{(self.prompt_chars + self.answer_chars) // 4} tokens (chars/4)"
        )


class ExpansionCache:
    """Generated expansions on disk, one JSON file per (tool source hash, model, prompt versions) key.

    ``path=None`` keeps them in memory. Files are written atomically (temp file + rename), so a
    crash leaves an entry whole or absent; an unreadable entry counts as a miss.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        if self.path is not None:
            self.path.mkdir(parents=True, exist_ok=True)
        self._memory: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def key(doc: ToolDoc, model: str, prompts: str) -> str:
        return hashlib.sha256(f"{doc.source_hash}\0{model}\0{prompts}".encode()).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            if key in self._memory:
                return self._memory[key]
        if self.path is None:
            return None
        file = self.path / f"{key}.json"
        try:
            value = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        with self._lock:
            self._memory[key] = value
        if self.path is not None:
            tmp = self.path / f".{key}.tmp"
            tmp.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
            tmp.replace(self.path / f"{key}.json")


def _tool_text(doc: ToolDoc) -> str:
    parts = [f"name: {doc.name}", f"description: {doc.description or '(none)'}"]
    params = doc.field_text("parameters")
    parts.append(f"parameters:\n{params}" if params else "parameters: (none)")
    parts.append(f"response: {doc.response}" if doc.response else "response: (none)")
    parts.append("examples:\n" + "\n".join(doc.examples) if doc.examples else "examples: (none)")
    return "\n".join(parts)[:6000]


class LLMExpander:
    """Expand tool documents with an LLM, judged for faithfulness, cached, concurrent.

    ``judge_llm`` defaults to ``llm`` (the same model with the judging prompt); ``judge=False``
    skips the check. ``concurrency`` bounds the calls in flight. A tool whose generation fails
    keeps its offline expansion (counted in the report's ``failed``, logged) — indexing goes on.
    """

    def __init__(
        self,
        llm: LLM,
        *,
        cache: ExpansionCache | str | Path | None = None,
        judge: bool = True,
        judge_llm: LLM | None = None,
        concurrency: int = 4,
        timeout: float = 60.0,
        retries: int = 1,
        progress: bool = False,
    ) -> None:
        self.llm, self.judge_llm = llm, judge_llm or llm
        self.cache = cache if isinstance(cache, ExpansionCache) else ExpansionCache(cache)
        self.judge, self.concurrency, self.timeout, self.retries = judge, max(1, concurrency), timeout, retries
        self.progress = progress
        self.model = str(getattr(llm, "name", type(llm).__name__))
        self.prompts = f"{EXPAND_V1.id}+{JUDGE_V1.id if judge else 'nojudge'}"
        self.last_report = ExpansionReport()

    # -------------------------------------------------------------- public
    def expand(self, docs: Sequence[ToolDoc]) -> list[ToolDoc]:
        """Expanded copies of ``docs`` (same order); see :attr:`last_report` for the cost."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.aexpand(docs))
        result: list[list[ToolDoc]] = []  # called from inside an event loop: run it in a thread
        thread = threading.Thread(target=lambda: result.append(asyncio.run(self.aexpand(docs))))
        thread.start()
        thread.join()
        return result[0]

    async def aexpand(self, docs: Sequence[ToolDoc]) -> list[ToolDoc]:
        start = time.perf_counter()
        report = ExpansionReport(tools=len(docs))
        sem = asyncio.Semaphore(self.concurrency)
        bar = _bar(len(docs), self.progress)

        async def one(doc: ToolDoc) -> ToolDoc:
            async with sem:
                out = await self._expand_one(doc, report)
            bar.update(1)
            return out

        out = await asyncio.gather(*(one(d) for d in docs))
        bar.close()
        report.seconds = round(time.perf_counter() - start, 3)
        self.last_report = report
        logger.info("%s", report.summary())
        return list(out)

    # -------------------------------------------------------------- one tool
    async def _expand_one(self, doc: ToolDoc, report: ExpansionReport) -> ToolDoc:
        key = ExpansionCache.key(doc, self.model, self.prompts)
        cached = self.cache.get(key)
        if cached is not None:
            report.cached += 1
            return _apply(doc, cached, self._source())
        try:
            fields = await self._generate_judged(doc, report)
        except Exception as exc:  # noqa: BLE001 - one tool's failure must not stop indexing
            report.failed += 1
            logger.warning("expansion of %r failed, offline expansion kept: %s: %s", doc.name, type(exc).__name__, exc)
            return doc
        report.generated += 1
        self.cache.put(key, fields)
        return _apply(doc, fields, self._source())

    def _source(self) -> str:
        return f"llm:{self.model}:{EXPAND_V1.id}"

    async def _call(
        self, llm: LLM, template: Any, schema: type[BaseModel], report: ExpansionReport, **data: Any
    ) -> Any:
        messages = render(template, **data)
        report.llm_calls += 1
        report.prompt_chars += sum(len(m.content) for m in messages)
        out = await astructured_call(llm, messages, schema, timeout=self.timeout, retries=self.retries)
        report.answer_chars += len(out.model_dump_json())
        return out

    async def _generate_judged(self, doc: ToolDoc, report: ExpansionReport) -> dict[str, Any]:
        tool = _tool_text(doc)
        out: ExpansionOutput = await self._call(self.llm, EXPAND_V1, ExpansionOutput, report, tool=tool, redo=None)
        fields = _present(out, doc)
        if not self.judge or not fields:
            return fields
        bad = await self._unfaithful(tool, fields, report)
        if not bad:
            return fields
        report.regenerated_fields += len(bad)
        again: ExpansionOutput = await self._call(
            self.llm, EXPAND_V1, ExpansionOutput, report, tool=tool, redo=sorted(bad)
        )
        redone = {f: v for f, v in _present(again, doc).items() if f in bad}
        still_bad = await self._unfaithful(tool, redone, report) if redone else set()
        kept = {f: v for f, v in fields.items() if f not in bad}
        kept.update({f: v for f, v in redone.items() if f not in still_bad})
        report.dropped_fields += len(bad - (set(redone) - still_bad))
        return kept

    async def _unfaithful(self, tool: str, fields: dict[str, Any], report: ExpansionReport) -> set[str]:
        generated = json.dumps(fields, ensure_ascii=False, indent=1)
        verdict: FaithfulnessVerdict = await self._call(
            self.judge_llm, JUDGE_V1, FaithfulnessVerdict, report, tool=tool, generated=generated
        )
        return {f for f in verdict.unfaithful if f in fields}


def _present(out: ExpansionOutput, doc: ToolDoc) -> dict[str, Any]:
    """The non-empty generated fields; inferred fields only where the document lacks the real one."""
    fields = {f: v for f, v in out.model_dump().items() if v}
    if doc.response:
        fields.pop("inferred_response", None)
    if doc.examples:
        fields.pop("inferred_examples", None)
    if "tags" in fields:
        fields["tags"] = [t.lower() for t in fields["tags"]][:5]
    return fields


def _apply(doc: ToolDoc, fields: dict[str, Any], source: str) -> ToolDoc:
    """``doc`` with the generated ``fields`` over its expansion, each marked with ``source``."""
    known = {f: v for f, v in fields.items() if f in GENERATED_FIELDS}
    if not known:
        return doc
    exp = doc.expansion
    sources = {**exp.sources, **{f: source for f in known}}
    return doc.model_copy(update={"expansion": ToolExpansion(**{**exp.model_dump(), **known, "sources": sources})})


class _NullBar:
    def update(self, n: int) -> None: ...
    def close(self) -> None: ...


def _bar(total: int, enabled: bool) -> Any:
    if not enabled or total == 0:
        return _NullBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="expanding tools", unit="tool")
