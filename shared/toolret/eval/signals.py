"""Per-query raw retrieval signals of a dev set, computed once and cached for fast re-scoring.

``toolret bench --lodo`` chooses defaults by leaving one dataset out (docs/method.md, section 4b). Running
the real pipeline for every candidate setting would take hours on two cores; instead each dev
set's sampled queries are ranked once over a deep candidate pool (``POOL_DEPTH`` per field and
signal, every field, both signals, the tools the query names) and everything the score needs is
kept as arrays: raw BM25 and cosine per field, the per-field BM25 upper bound, presence, name
match, the parameter penalty (unscaled), and each candidate's best per-field rank (so a smaller
candidate depth is a mask). :mod:`toolret.eval.lodo` re-scores settings over these arrays in
numpy, in seconds. The bm25 and cosine baselines are scored here too, over the whole registry.

Arrays are padded to the largest pool of the set: ``[Q, C]`` per candidate, ``[Q, C, F]`` per
candidate and field (F = :data:`toolret.documents.tool_doc.INDEX_FIELDS`), ``valid`` marks real slots.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from toolret.documents.tool_doc import INDEX_FIELDS

__all__ = ["POOL_DEPTH", "SIGNALS_VERSION", "DatasetSignals", "extract_signals", "load_or_extract"]

logger = logging.getLogger("toolret")

#: Candidates per field and signal kept in the cache: the deepest candidate depth LODO may try.
POOL_DEPTH = 100
#: Bumped whenever what is extracted changes, so stale caches are rebuilt.
SIGNALS_VERSION = 9  # 9: the intent fields' BM25 reads the request without its values (the default "words")
_RANK_NONE = 1 << 20


@dataclass
class DatasetSignals:
    """One dev set's cached signals (see the module docstring for the array shapes)."""

    name: str
    n_tools: int
    lex: np.ndarray  # [Q, C, F] raw BM25 per field
    dense: np.ndarray  # [Q, C, F] cosine per field
    present: np.ndarray  # [Q, C, F] the tool has text in the field
    bound: np.ndarray  # [Q, F] BM25 upper bound of the query per field
    rank: np.ndarray  # [Q, C] best per-field rank (lexical or dense) of the candidate
    valid: np.ndarray  # [Q, C]
    named: np.ndarray  # [Q, C] the query names the tool
    penalty: np.ndarray  # [Q, C] parameter penalty at scale 1
    rel: np.ndarray  # [Q, C] candidate is relevant (id level)
    n_rel: np.ndarray  # [Q] relevant tools (id level)
    group: np.ndarray  # [Q, C] name-level group id of the candidate (id.split('#')[0])
    rel_group: np.ndarray  # [Q, C] candidate's name is relevant
    n_rel_group: np.ndarray  # [Q] relevant names
    qfeat: np.ndarray  # [Q, len(QUERY_FEATURES)] query evidence features
    cand: np.ndarray  # [Q, C] the candidate's tool index in the registry (-1 in padding)
    hub: np.ndarray  # [Q, C, F] the candidate's hubness in every field (toolret.index.hubness), 0 where absent
    #: "bm25"/"cosine" (+ "@name") -> [Q, 4]: recall@5, ndcg@10, completeness@10, recall@1
    baselines: dict[str, np.ndarray]
    has_names: bool = False
    #: [Q, F, 4] per field, over every tool of the registry that has it: BM25 mean and sd, cosine mean and sd.
    reg: np.ndarray = field(default_factory=lambda: np.zeros((0, len(INDEX_FIELDS), 4), dtype=np.float32))

    @property
    def n_queries(self) -> int:
        return int(self.lex.shape[0])

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {k: v for k, v in self.__dict__.items() if isinstance(v, np.ndarray)}
        arrays.update({f"baseline__{k}": v for k, v in self.baselines.items()})
        tmp = path.with_name(path.name + ".tmp.npz")
        arrays["__meta"] = np.array([self.name, str(self.n_tools), str(int(self.has_names)), str(SIGNALS_VERSION)])
        np.savez_compressed(tmp, **arrays)  # type: ignore[arg-type]  # the stub mixes **kwds with allow_pickle
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> DatasetSignals | None:
        with np.load(path) as data:
            meta = [str(x) for x in data["__meta"]]
            if len(meta) < 4 or int(meta[3]) != SIGNALS_VERSION:
                return None
            arrays = {k: data[k] for k in data.files if not k.startswith("__")}
        baselines = {k.split("__", 1)[1]: arrays.pop(k) for k in list(arrays) if k.startswith("baseline__")}
        return cls(name=meta[0], n_tools=int(meta[1]), has_names=bool(int(meta[2])), baselines=baselines, **arrays)


#: Query-level evidence features (columns of ``DatasetSignals.qfeat``); see :func:`query_features`.
QUERY_FEATURES = ("idf_mass", "oov_share", "n_args", "n_ident", "n_tokens")


def query_features(text: str, tokens: list[str], df: dict[str, int], n_docs: int) -> list[float]:
    from toolret.scoring.evidence import query_evidence

    ev = query_evidence(text, tokens, df, n_docs)
    return [ev.idf_mass, ev.oov_share, float(ev.n_args), float(ev.n_ident), float(len(tokens))]


def _metrics_of(ranked: list[str], relevant: list[str]) -> list[float]:
    from toolret.eval.metrics import completeness_at_k, ndcg_at_k, recall_at_k

    return [
        recall_at_k(relevant, ranked, 5),
        ndcg_at_k(relevant, ranked, 10),
        completeness_at_k(relevant, ranked, 10),
        recall_at_k(relevant, ranked, 1),
    ]


def _name_of(tool_id: str) -> str:
    return tool_id.split("#", 1)[0]


def _distinct(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(_name_of(i) for i in ids))


def extract_signals(
    dataset: Any,
    embedder: Any,
    *,
    limit: int | None = 500,
    seed: int = 0,
    depth: int = POOL_DEPTH,
    intent_without_arguments: str | bool = "words",
) -> DatasetSignals:
    """Rank a sample of the dataset's queries once over a deep pool and keep the raw signals
    (``intent_without_arguments``: RetrievalConfig's option, whose values the intent fields read as the engine does)."""
    from toolret import ToolKnowledgeBase
    from toolret.config import PenaltyConfig, RetrievalConfig
    from toolret.documents.text import tokenize
    from toolret.eval.baseline import BM25Baseline, CosineBaseline
    from toolret.index.dense import dense_scores
    from toolret.index.hubness import tool_hubness
    from toolret.index.lexical import analyze_query
    from toolret.scoring.arguments import spot_arguments
    from toolret.scoring.candidates import field_tokens, named_tools, ranking_inputs, top_n
    from toolret.scoring.evidence import registry_df
    from toolret.scoring.mftr import parameter_penalty

    start = time.perf_counter()
    queries = dataset.sample(limit, seed=seed).queries
    kb = ToolKnowledgeBase(None, embedder=embedder)
    kb.add(dataset.tool_docs())
    snap = kb._writer.snapshot  # the knowledge base's current snapshot (the project's own eval code)
    n_tools = len(snap)
    pen_cfg = RetrievalConfig(penalty=PenaltyConfig(scale=1.0))
    has_names = any("#" in d.id for d in snap.docs)
    name_ids: dict[str, int] = {}
    group_of = np.array([name_ids.setdefault(_name_of(d.id), len(name_ids)) for d in snap.docs], dtype=np.int32)
    df, n_docs = registry_df(snap)
    every = tool_hubness(snap.vectors, snap.rows, n_tools, fields=INDEX_FIELDS)  # the engine uses HUB_FIELDS only
    hub_all = np.stack([every[f] for f in INDEX_FIELDS], axis=1)  # [N, F]
    bm25 = BM25Baseline(dataset.tools)
    cosine = CosineBaseline(dataset.tools, embedder=embedder)
    # The engine's inputs: each field's query text and vector (the intent fields without argument values).
    query_side = RetrievalConfig(intent_without_arguments=intent_without_arguments)
    inputs = ranking_inputs(embedder, query_side, [q.query for q in queries])
    rows: list[dict[str, Any]] = []
    base: dict[str, list[list[float]]] = {"bm25": [], "cosine": [], "bm25@name": [], "cosine@name": []}
    F = len(INDEX_FIELDS)
    for q, (qvec, fields) in zip(queries, inputs):
        fields = fields or {}
        tokens = analyze_query(q.query)
        per_field, _ = field_tokens(query_side, q.query, tokens, INDEX_FIELDS, fields)
        bm25_tokens = [per_field[f] for f in INDEX_FIELDS]
        lex_all = [snap.lexical[f].scores(bm25_tokens[i]) for i, f in enumerate(INDEX_FIELDS)]
        dense_all = [dense_scores(snap, f, fields[f][1] if f in fields else qvec) for f in INDEX_FIELDS]
        best_rank = np.full(n_tools, _RANK_NONE, dtype=np.int64)
        for i, f in enumerate(INDEX_FIELDS):
            mask = snap.present[f]
            for scores in (lex_all[i], dense_all[i] + 1.0):
                top = top_n(scores, mask, depth)
                order = top[np.argsort(-scores[top], kind="stable")]
                best_rank[order] = np.minimum(best_rank[order], np.arange(len(order)))
        named = named_tools(snap, q.query)
        pool = set(np.flatnonzero(best_rank < _RANK_NONE).tolist()) | named
        cands = np.array(sorted(pool), dtype=np.int64)
        args = spot_arguments(q.query)
        words = set(tokenize(q.query, drop_stopwords=False))
        relevant = set(q.relevant)
        rel_names = {_name_of(r) for r in q.relevant}
        rows.append(
            {
                "lex": np.stack([lex_all[i][cands] for i in range(F)], axis=1),
                "dense": np.stack([dense_all[i][cands] for i in range(F)], axis=1),
                "present": np.stack([snap.present[f][cands] for f in INDEX_FIELDS], axis=1),
                "bound": np.array(
                    [snap.lexical[f].upper_bound(bm25_tokens[i]) for i, f in enumerate(INDEX_FIELDS)], dtype=np.float32
                ),
                "rank": np.where(np.isin(cands, list(named)), 0, best_rank[cands]),
                "named": np.isin(cands, list(named)),
                "penalty": np.array([parameter_penalty(snap.docs[c], args, words, pen_cfg) for c in cands.tolist()]),
                "rel": np.array([snap.docs[c].id in relevant for c in cands.tolist()]),
                "n_rel": len(relevant),
                "group": group_of[cands],
                "rel_group": np.array([_name_of(snap.docs[c].id) in rel_names for c in cands.tolist()]),
                "n_rel_group": len(rel_names),
                "qfeat": np.array(query_features(q.query, tokens, df, n_docs), dtype=np.float32),
                "cand": cands,
                "hub": hub_all[cands],
                "reg": np.array(
                    [
                        [
                            lex_all[i][snap.present[f]].mean() if snap.present[f].any() else 0.0,
                            lex_all[i][snap.present[f]].std() if snap.present[f].any() else 0.0,
                            dense_all[i][snap.present[f]].mean() if snap.present[f].any() else 0.0,
                            dense_all[i][snap.present[f]].std() if snap.present[f].any() else 0.0,
                        ]
                        for i, f in enumerate(INDEX_FIELDS)
                    ],
                    dtype=np.float32,
                ),
            }
        )
        ranked_bm25 = bm25.search(q.query, k=40).ids
        ranked_cos = cosine.search_vector(qvec, k=40).ids
        base["bm25"].append(_metrics_of(ranked_bm25, q.relevant))
        base["cosine"].append(_metrics_of(ranked_cos, q.relevant))
        base["bm25@name"].append(_metrics_of(_distinct(ranked_bm25), sorted(rel_names)))
        base["cosine@name"].append(_metrics_of(_distinct(ranked_cos), sorted(rel_names)))
    C = max(len(r["rel"]) for r in rows)
    Q = len(rows)

    def pad(key: str, shape: tuple[int, ...], dtype: Any, fill: Any = 0) -> np.ndarray:
        out = np.full((Q, C, *shape), fill, dtype=dtype)
        for qi, r in enumerate(rows):
            out[qi, : len(r[key])] = r[key]
        return out

    valid = np.zeros((Q, C), dtype=bool)
    for qi, r in enumerate(rows):
        valid[qi, : len(r["rel"])] = True
    sig = DatasetSignals(
        name=dataset.name,
        n_tools=n_tools,
        lex=pad("lex", (F,), np.float32),
        dense=pad("dense", (F,), np.float32),
        present=pad("present", (F,), bool),
        bound=np.stack([r["bound"] for r in rows]),
        rank=pad("rank", (), np.int64, _RANK_NONE),
        valid=valid,
        named=pad("named", (), bool),
        penalty=pad("penalty", (), np.float32),
        rel=pad("rel", (), bool),
        n_rel=np.array([r["n_rel"] for r in rows], dtype=np.int32),
        group=pad("group", (), np.int32, -1),
        rel_group=pad("rel_group", (), bool),
        n_rel_group=np.array([r["n_rel_group"] for r in rows], dtype=np.int32),
        qfeat=np.stack([r["qfeat"] for r in rows]),
        cand=pad("cand", (), np.int32, -1),
        hub=pad("hub", (F,), np.float32),
        baselines={k: np.array(v, dtype=np.float32) for k, v in base.items()},
        has_names=has_names,
        reg=np.stack([r["reg"] for r in rows]),
    )
    kb.close()
    logger.info(
        "%s: signals of %d queries over pools of up to %d tools in %.1f s",
        dataset.name,
        Q,
        C,
        time.perf_counter() - start,
    )
    return sig


def _fingerprint(folder: Path, limit: int | None, seed: int, depth: int, split: str = "test") -> str:
    from toolret.eval.datasets import TRAIN_QUERIES_FILE, has_training_split

    queries = TRAIN_QUERIES_FILE if split == "train" and has_training_split(folder) else "queries.jsonl"
    h = hashlib.sha1()
    for name in ("tools.jsonl", queries):
        stat = (folder / name).stat()
        h.update(f"{name}:{stat.st_size}:{int(stat.st_mtime)}".encode())
    h.update(f"{limit}:{seed}:{depth}:{SIGNALS_VERSION}".encode())
    return h.hexdigest()[:12]


def load_or_extract(
    folder: str | Path,
    cache_dir: str | Path,
    embedder: Any,
    *,
    limit: int | None = 500,
    seed: int = 0,
    depth: int = POOL_DEPTH,
    split: str = "test",
    intent_without_arguments: str | bool = "words",
) -> DatasetSignals:
    """The dataset's signals from ``cache_dir`` when cached for the same files and sample, else extracted.

    ``split="train"`` reads the set's training split where it has one (the learned fusion fits on it,
    :mod:`toolret.training.fusion_fit`); its cache file is named ``<set>.train-<fingerprint>.npz``.
    """
    from toolret.eval.datasets import has_training_split, load_dataset

    folder = Path(folder)
    stem = f"{folder.name}.train" if split == "train" and has_training_split(folder) else folder.name
    from toolret.config import RetrievalConfig

    mode = RetrievalConfig(intent_without_arguments=intent_without_arguments).intent_without_arguments
    stem += {"words": "", "all": ".intent", "off": ".whole"}[mode]
    path = Path(cache_dir) / f"{stem}-{_fingerprint(folder, limit, seed, depth, split)}.npz"
    if path.exists():
        cached = DatasetSignals.load(path)
        if cached is not None:
            return cached
    sig = extract_signals(
        load_dataset(folder, split=split),
        embedder,
        limit=limit,
        seed=seed,
        depth=depth,
        intent_without_arguments=intent_without_arguments,
    )
    sig.save(path)
    return sig
