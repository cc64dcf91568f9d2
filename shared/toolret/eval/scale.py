"""Registries of any size for the scale benchmark: the real benchmark tools plus synthetic variants.

The benchmarks hold 3,328 real tools; the Toolshed tool-M study asks how retrieval behaves
as the registry grows far beyond that. A registry of size M here is:

1. the *core*: every tool a sampled query needs, plus the whole ToolE registry;
2. the other real tools of ``../shared/benchmarks`` (all datasets), in a fixed shuffled order;
3. synthetic variants, as many as needed to reach M.

Ids are prefixed by dataset family (``toole/``, ``bfcl/``, ``restbench_tmdb/``...; datasets
with identical ``tools.jsonl`` share one family), synthetic ids are ``syn/<n>``. The order
of steps 2 and 3 does not depend on M, so registries are nested: R(1k) ⊂ R(10k) ⊂ R(100k).

**Synthetic variant n** (seed 0): two distinct real tools ``a`` and ``b`` drawn uniformly;
the variant bundles their documentation, as aggregated API catalogues do: name
``<a>_and_<b>``, description ``a.description + " " + b.description``, parameters those of
``a`` plus up to three of ``b`` (new names only), response and examples those of ``a`` (or
``b``'s response when ``a`` has none). Each variant competes with both parents for their
queries: a hard, documented distractor, never a copy.

**Embeddings without embedding 300k texts.** MiniLM embeds ~100 short texts/s on two
cores, so 100k tools × 2-3 fields cannot be embedded fresh. :class:`ComposedEmbedder`
embeds every real text once with the real model and keeps it in a cache file (``.npz``,
keyed by the SHA-1 of the text); a synthetic field whose text is a real tool's text (the
response, the examples, parameters taken whole) reuses that vector exactly; a blended field
(description, parameters of both parents) gets the unit-normalised sum of its parents'
field vectors, each weighted by its word count (capped at 200, near MiniLM's 256-token
window). MiniLM itself mean-pools token vectors, which is why the blend is close to the
embedding of the concatenated text; :func:`approximation_quality` measures how close on a
sample (the benchmark reports it).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from toolret.documents.tool_doc import INDEX_FIELDS, ToolDoc
from toolret.errors import DatasetError
from toolret.eval.datasets import EvalQuery, load_dataset, sample_queries

__all__ = [
    "ComposedEmbedder",
    "RealPool",
    "SyntheticPlan",
    "approximation_quality",
    "build_registry",
    "expand_all",
    "load_real",
    "synthetic_variant",
]

logger = logging.getLogger("toolret")

_MAX_WEIGHT = 200
_EXTRA_PARAMS = 3


# ================================================================== real tools and queries
@dataclass
class RealPool:
    """Every real tool (ids prefixed by family) and every dataset's queries (relevant ids prefixed)."""

    docs: list[ToolDoc]
    queries: dict[str, list[EvalQuery]]
    family: dict[str, str] = field(default_factory=dict)


def load_real(root: str | Path) -> RealPool:
    """All benchmark folders under ``root`` (each with tools.jsonl and queries.jsonl)."""
    folders = sorted(p for p in Path(root).iterdir() if (p / "tools.jsonl").is_file())
    if not folders:
        raise DatasetError(f"{root}: no dataset folder with a tools.jsonl inside")
    docs: list[ToolDoc] = []
    queries: dict[str, list[EvalQuery]] = {}
    family: dict[str, str] = {}
    by_content: dict[str, str] = {}
    for folder in folders:
        digest = hashlib.sha1((folder / "tools.jsonl").read_bytes()).hexdigest()
        dataset = load_dataset(folder)
        if digest not in by_content:  # datasets with the same registry (toole_single/multi) share it
            by_content[digest] = folder.name.split("_")[0] if folder.name.startswith("toole") else folder.name
            docs += [d.model_copy(update={"id": f"{by_content[digest]}/{d.id}"}) for d in dataset.tool_docs()]
        fam = family[folder.name] = by_content[digest]
        queries[folder.name] = [
            q.model_copy(update={"relevant": [f"{fam}/{r}" for r in q.relevant]}) for q in dataset.queries
        ]
    return RealPool(docs=docs, queries=queries, family=family)


def expand_all(docs: Sequence[ToolDoc]) -> list[ToolDoc]:
    """The docs as the knowledge base indexes them: with the offline expansion filled in
    (``toolret.index.expansion.expand_offline``; the knowledge base leaves an expanded doc as is)."""
    from toolret.index.expansion import expand_offline

    return [expand_offline(d) for d in docs]


def sampled_queries(pool: RealPool, datasets: Sequence[str], per_dataset: int, seed: int = 0) -> list[EvalQuery]:
    """A reproducible sample of ``per_dataset`` queries from each named dataset."""
    out: list[EvalQuery] = []
    for name in datasets:
        if name not in pool.queries:
            raise DatasetError(f"no dataset {name!r} under the benchmarks root (have {sorted(pool.queries)})")
        out += sample_queries(pool.queries[name], per_dataset, seed=seed)
    return out


# ================================================================== synthetic variants
def synthetic_variant(n: int, a: ToolDoc, b: ToolDoc) -> ToolDoc:
    """Variant ``n`` bundling real tools ``a`` and ``b`` (see the module docstring)."""
    names = {p.name for p in a.parameters}
    extra = [p for p in b.parameters if p.name not in names][:_EXTRA_PARAMS]
    return ToolDoc(
        id=f"syn/{n:06d}",
        name=f"{a.name}_and_{b.name}",
        description=f"{a.description} {b.description}".strip(),
        parameters=[*a.parameters, *extra],
        response=a.response or b.response,
        examples=list(a.examples),
        metadata={"synthetic": True, "parents": [a.id, b.id]},
    )


class SyntheticPlan:
    """The fixed sequence of (variant, parents): variant n is the same for every registry size."""

    def __init__(self, real: Sequence[ToolDoc], seed: int = 0) -> None:
        if len(real) < 2:
            raise DatasetError("synthetic variants need at least two real tools")
        self.real = list(real)
        self.seed = seed
        self._pairs = np.zeros((0, 2), dtype=np.int64)

    def pairs(self, count: int) -> np.ndarray:
        if count > len(self._pairs):
            rng = np.random.default_rng(self.seed)
            n = len(self.real)
            first = rng.integers(0, n, size=count)
            second = (first + rng.integers(1, n, size=count)) % n  # never the same tool
            self._pairs = np.stack([first, second], axis=1)
        return self._pairs[:count]

    def variants(self, count: int) -> list[ToolDoc]:
        return [synthetic_variant(i, self.real[a], self.real[b]) for i, (a, b) in enumerate(self.pairs(count))]


def build_registry(pool: RealPool, size: int, core: set[str], *, seed: int = 0) -> list[ToolDoc]:
    """``size`` tools: the core, then other real tools (fixed order), then synthetic variants."""
    by_id = {d.id: d for d in pool.docs}
    missing = sorted(core - set(by_id))
    if missing:
        raise DatasetError(f"core tools not among the real tools: {missing[:3]}")
    if size < len(core):
        raise DatasetError(f"a registry of {size} tools cannot hold the {len(core)} core tools; use a larger size")
    rest = [d for d in pool.docs if d.id not in core]
    order = np.random.default_rng(seed).permutation(len(rest))
    registry = [by_id[i] for i in sorted(core)] + [rest[i] for i in order][: size - len(core)]
    if len(registry) < size:
        registry += SyntheticPlan(pool.docs, seed=seed).variants(size - len(registry))
    return registry


# ================================================================== embeddings
def _key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def _weight(text: str) -> float:
    return float(min(len(text.split()), _MAX_WEIGHT) or 1)


class ComposedEmbedder:
    """The real embedding model behind a text cache, plus composed vectors for synthetic fields.

    ``embed`` serves a composed vector when one was registered for the text (see
    :meth:`compose_registry`), else the cached vector, else embeds with ``model`` and caches
    it. :meth:`save` writes the cache to ``cache_path`` (an ``.npz``) for the next run. Set
    ``frozen`` after indexing: queries then always go through the model (and are not cached),
    so measured search latency includes embedding the query, as it does for a user.
    """

    def __init__(self, model: object, cache_path: str | Path | None = None) -> None:
        self.model = model
        self.name = str(getattr(model, "name", "model"))
        self.texts_embedded = 0
        self.model_texts = 0
        self.cache_path = Path(cache_path) if cache_path else None
        self._cache: dict[str, np.ndarray] = {}
        # key -> ((parent text key, weight), ...): the blend is computed when embed() asks for it.
        # Holding 236k blended vectors for a 100k registry took ~390 MB beside the knowledge base's
        # own copy; a recipe is a few dozen bytes, and the vector it gives is the same.
        self._composed: dict[str, tuple[tuple[str, float], ...]] = {}
        self._dirty = False
        self.frozen = False
        if self.cache_path is not None and self.cache_path.exists():
            with np.load(self.cache_path) as data:
                self._cache = dict(zip((str(k) for k in data["keys"]), data["vectors"]))

    def __len__(self) -> int:
        return len(self._cache)

    def has(self, text: str) -> bool:
        return _key(text) in self._cache

    def cached(self, text: str) -> np.ndarray:
        return self._cache[_key(text)]

    def warm(self, texts: Sequence[str], batch: int = 256) -> int:
        """Embed (with the model) every text not cached yet; returns how many were embedded."""
        todo = list(dict.fromkeys(t for t in texts if t and _key(t) not in self._cache))
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            vectors = self.model.embed(chunk)  # type: ignore[attr-defined]
            self._cache.update(zip(map(_key, chunk), np.asarray(vectors, dtype=np.float32)))
            self.model_texts += len(chunk)
            logger.info("embedded %d / %d texts for the scale cache", min(start + batch, len(todo)), len(todo))
        self._dirty = self._dirty or bool(todo)
        return len(todo)

    def save(self) -> None:
        if self.cache_path is None or not self._dirty:
            return
        self.cache_path.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self._cache), dtype="U40")
        vectors = np.stack(list(self._cache.values())).astype(np.float32)
        tmp = self.cache_path.with_name(self.cache_path.name + ".tmp.npz")
        np.savez(tmp, keys=keys, vectors=vectors)
        tmp.replace(self.cache_path)
        self._dirty = False

    def compose_registry(self, docs: Sequence[ToolDoc], by_id: dict[str, ToolDoc]) -> int:
        """Register a vector for every synthetic field text that is not a cached real text."""
        count = 0
        for doc in docs:
            parents = doc.metadata.get("parents") if doc.metadata.get("synthetic") else None
            if not parents:
                continue
            a, b = by_id[parents[0]], by_id[parents[1]]
            for f in INDEX_FIELDS:
                text = doc.field_text(f)
                if not text or self.has(text) or _key(text) in self._composed:
                    continue
                # A field neither parent has (rare) is blended from their descriptions.
                source = f if any(p.field_text(f) for p in (a, b)) else "description"
                parts = [(p.field_text(source), _weight(p.field_text(source))) for p in (a, b) if p.field_text(source)]
                for t, _ in parts:
                    self.cached(t)  # a parent text must be cached: fail here, not at indexing
                self._composed[_key(text)] = tuple((_key(t), w) for t, w in parts)
                count += 1
        return count

    def composed_vector(self, text: str) -> np.ndarray | None:
        recipe = self._composed.get(_key(text))
        return None if recipe is None else self._blend(recipe)

    def _blend(self, recipe: tuple[tuple[str, float], ...]) -> np.ndarray:
        """The unit-normalised, word-count-weighted sum of the parents' cached vectors."""
        vec = np.sum([w * self._cache[k] for k, w in recipe], axis=0)
        return (vec / (np.linalg.norm(vec) or 1.0)).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        self.texts_embedded += len(texts)
        misses = list(dict.fromkeys(t for t in texts if _key(t) not in self._composed and _key(t) not in self._cache))
        fresh: dict[str, np.ndarray] = {}
        if misses and self.frozen:  # a query: through the model every time, never cached
            fresh = dict(zip(map(_key, misses), np.asarray(self.model.embed(misses), dtype=np.float32)))  # type: ignore[attr-defined]
            self.model_texts += len(misses)
        elif misses:
            self.warm(misses)
        rows = [
            self._blend(self._composed[k]) if k in self._composed else self._cache[k] if k in self._cache else fresh[k]
            for k in map(_key, texts)
        ]
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack(rows).astype(np.float32)


def approximation_quality(
    embedder: ComposedEmbedder, docs: Sequence[ToolDoc], sample: int = 200, seed: int = 0
) -> dict[str, float]:
    """Cosine between composed and truly embedded vectors, on a sample of synthetic field texts."""
    texts = [d.field_text(f) for d in docs if d.metadata.get("synthetic") for f in INDEX_FIELDS]
    texts = [t for t in dict.fromkeys(texts) if t and embedder.composed_vector(t) is not None]
    if not texts:
        return {"n": 0, "mean_cosine": float("nan"), "min_cosine": float("nan")}
    rng = np.random.default_rng(seed)
    chosen = [texts[i] for i in rng.choice(len(texts), size=min(sample, len(texts)), replace=False)]
    true = np.asarray(embedder.model.embed(chosen), dtype=np.float32)  # type: ignore[attr-defined]
    composed = np.stack([v for t in chosen if (v := embedder.composed_vector(t)) is not None])
    cos = np.sum(true * composed, axis=1)
    return {"n": len(chosen), "mean_cosine": float(cos.mean()), "min_cosine": float(cos.min())}
