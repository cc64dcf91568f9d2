"""Leave one registry out: does a cross-encoder over ``fast``'s top candidates beat ``fast``?

A measurement record for candidate (b) of the trained second stage (docs/models.md, "A
cross-encoder second stage"), not part of the package. For each fold of
``toolret.training.benchmarks.FOLDS`` a cross-encoder is initialised from the packaged MiniLM
(mean pooling over the joint query/tool sequence, a new linear head), trained one epoch with a
listwise loss (softmax over one relevant tool and ``NEGATIVES`` non-relevant ones from ``fast``'s
top 30 of the same registry; tools sharing a relevant tool's name are never negatives) on the other
registries' 500-query samples, and used to rerank ``fast``'s top ``TOP_N`` on the left-out sets.

The interpolation weight with ``fast``'s fused score (per-query z-scores) is chosen leave-one-out
too: each left-out fold gets the weight that does best on the other folds' left-out sets. The
printout gives R@5 / NDCG@10 per set for ``fast``, the cross-encoder alone and the mix, the
training time and the scoring throughput (fp32 torch, two cores).

Run from the repository root with the dev environment::

    .venv/bin/python experiments/cross_encoder_lodo.py --cache .bench/second-stage --out .train/ce

Per-fold scores are saved in ``--out`` so a rerun (or an interrupted run) only trains what is
missing.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import recall_ndcg, snapshot_docs
from second_stage_lodo import query_z, signals

from toolret.eval.datasets import load_dataset
from toolret.eval.lodo import default_setting, fused_scores
from toolret.eval.scale import ComposedEmbedder
from toolret.index.embedding import resolve_embedder
from toolret.training.benchmarks import FOLDS
from toolret.training.pairs import document_text
from toolret.training.trainer import base_model_dir

TOP_N = 20  # candidates reranked per query
POOL = 30  # negatives are drawn from fast's top POOL
NEGATIVES = 5
MAX_TOKENS = 96
QUERIES_PER_SET = 250  # training queries per registry set at most (balance)
BATCH = 4  # queries (groups) per step
LR = 4e-5
SEED = 0
ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0)


def ce_text(doc: Any) -> str:
    params = ", ".join(p.name for p in doc.parameters)
    text = document_text(doc)
    return f"{text} Parameters: {params}" if params else text


class CrossEncoder:
    """MiniLM over "query [SEP] tool", mean-pooled, one linear unit: a relevance logit."""

    def __init__(self, torch: Any, transformers: Any) -> None:
        from tokenizers import Tokenizer

        base = base_model_dir()
        self.torch = torch
        self.encoder = transformers.AutoModel.from_pretrained(str(base))
        self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)
        torch.nn.init.normal_(self.head.weight, std=0.02)
        torch.nn.init.zeros_(self.head.bias)
        self.tok = Tokenizer.from_file(str(base / "tokenizer.json"))
        self.tok.enable_truncation(MAX_TOKENS)
        self.tok.no_padding()

    def parameters(self) -> list[Any]:
        return [*self.encoder.parameters(), *self.head.parameters()]

    def train(self, on: bool) -> None:
        self.encoder.train(on)
        self.head.train(on)

    def logits(self, queries: list[str], docs: list[str]) -> Any:
        torch = self.torch
        rows = [e.ids for e in self.tok.encode_batch(list(zip(queries, docs)), add_special_tokens=True)]
        types = [e.type_ids for e in self.tok.encode_batch(list(zip(queries, docs)), add_special_tokens=True)]
        longest = max(len(r) for r in rows)
        ids = torch.zeros((len(rows), longest), dtype=torch.long)
        tt = torch.zeros_like(ids)
        mask = torch.zeros_like(ids)
        for i, (r, t) in enumerate(zip(rows, types)):
            ids[i, : len(r)] = torch.tensor(r)
            tt[i, : len(t)] = torch.tensor(t)
            mask[i, : len(r)] = 1
        hidden = self.encoder(input_ids=ids, attention_mask=mask, token_type_ids=tt).last_hidden_state
        w = mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * w).sum(1) / w.sum(1).clamp(min=1e-9)
        return self.head(pooled).squeeze(-1)

    def score(self, queries: list[str], docs: list[str], batch: int = 64) -> np.ndarray:
        self.train(False)
        order = np.argsort([len(q) + len(d) for q, d in zip(queries, docs)])
        out = np.zeros(len(queries), np.float32)
        with self.torch.no_grad():
            for a in range(0, len(order), batch):
                idx = order[a : a + batch]
                out[idx] = self.logits([queries[i] for i in idx], [docs[i] for i in idx]).numpy()
        return out


def groups_of(name: str, sig: Any, s0: np.ndarray, queries: list[str], docs: list[str], rng: random.Random) -> list:
    """(query, [positive, negatives...]) for each query with a relevant tool in fast's top POOL."""
    order = np.argsort(-s0, axis=1, kind="stable")[:, :POOL]
    out = []
    for qi in range(s0.shape[0]):
        cand = [c for c in order[qi] if np.isfinite(s0[qi, c])]
        pos = [c for c in cand if sig.rel[qi, c]]
        neg = [c for c in cand if not sig.rel[qi, c] and not sig.rel_group[qi, c]]
        if not pos or len(neg) < NEGATIVES:
            continue
        p = rng.choice(pos)
        ns = rng.sample(neg[: max(NEGATIVES * 2, 10)], NEGATIVES)
        out.append((queries[qi], [ce_text(docs[sig.cand[qi, c]]) for c in [p, *ns]]))
    rng.shuffle(out)
    return out[:QUERIES_PER_SET]


def train_fold(groups: list) -> tuple[CrossEncoder, float]:
    import torch
    import transformers

    torch.manual_seed(SEED)
    torch.set_num_threads(2)
    model = CrossEncoder(torch, transformers)
    opt = torch.optim.AdamW(
        [{"params": list(model.encoder.parameters()), "lr": LR}, {"params": list(model.head.parameters()), "lr": 1e-3}],
        weight_decay=0.01,
    )
    steps = (len(groups) + BATCH - 1) // BATCH
    warm = max(1, steps // 10)
    start = time.time()
    model.train(True)
    for step in range(steps):
        part = groups[step * BATCH : (step + 1) * BATCH]
        qs = [q for q, ds in part for _ in ds]
        ds = [d for _, dd in part for d in dd]
        logit = model.logits(qs, ds).view(len(part), NEGATIVES + 1)
        loss = torch.nn.functional.cross_entropy(logit, torch.zeros(len(part), dtype=torch.long))
        scale = (step + 1) / warm if step < warm else max(0.0, (steps - step) / max(1, steps - warm))
        for g, base in zip(opt.param_groups, (LR, 1e-3)):
            g["lr"] = base * scale
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 50 == 0:
            print(f"    step {step}/{steps} loss {loss.item():.3f} ({time.time() - start:.0f} s)", flush=True)
    return model, time.time() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path("../shared/benchmarks"))
    ap.add_argument("--cache", type=Path, default=Path(".bench/second-stage"))
    ap.add_argument("--out", type=Path, default=Path(".train/ce"))
    ap.add_argument("--latency", metavar="FOLD", help="export FOLD's model to int8 ONNX and time it on apibench")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    if a.latency:
        latency(a.root, a.out, a.latency)
        return
    sigs = signals(a.root, a.cache / "eval", 500, 0)
    st = default_setting("fast")
    stock = ComposedEmbedder(resolve_embedder(None), cache_path=a.cache / "eval" / "embeddings.npz")
    data = {}
    for n, sig in sigs.items():
        queries = [q.query for q in load_dataset(a.root / n).sample(500, seed=0).queries]
        data[n] = (queries, snapshot_docs(a.root, n, stock), fused_scores(sig, st)[0])
    ce: dict[str, np.ndarray] = {}
    for fold, left in FOLDS.items():
        saved = a.out / f"{fold}.npz"
        if saved.exists():
            with np.load(saved) as z:
                ce.update({n: z[n] for n in left})
            continue
        rng = random.Random(SEED)
        groups = [g for n in sigs if n not in left for g in groups_of(n, sigs[n], data[n][2], *data[n][:2], rng)]
        random.Random(SEED).shuffle(groups)
        print(f"fold {fold}: {len(groups)} training groups", flush=True)
        model, secs = train_fold(groups)
        import torch

        torch.save({"encoder": model.encoder.state_dict(), "head": model.head.state_dict()}, a.out / f"{fold}.pt")
        scored = {}
        t0, pairs = time.time(), 0
        for n in left:
            queries, docs, s0 = data[n]
            top = np.argsort(-s0, axis=1, kind="stable")[:, :TOP_N]
            qs, ds, where = [], [], []
            for qi in range(s0.shape[0]):
                for c in top[qi]:
                    if np.isfinite(s0[qi, c]):
                        qs.append(queries[qi])
                        ds.append(ce_text(docs[sigs[n].cand[qi, c]]))
                        where.append((qi, c))
            vals = model.score(qs, ds)
            pairs += len(qs)
            arr = np.full(s0.shape, np.nan, np.float32)
            for (qi, c), v in zip(where, vals):
                arr[qi, c] = v
            scored[n] = arr
        secs_score = time.time() - t0
        np.savez(saved, **scored)
        (a.out / f"{fold}.json").write_text(
            json.dumps({"groups": len(groups), "train_s": secs, "pairs": pairs, "score_s": secs_score})
        )
        ce.update(scored)
        print(f"  trained {secs:.0f} s; scored {pairs} pairs in {secs_score:.0f} s", flush=True)
    report(sigs, data, ce, a.out)


def latency(root: Path, out: Path, fold: str) -> None:
    """The fold model as weight-only int8 ONNX (the embedder's export scheme), timed on apibench's
    1,030 tools: reranking TOP_N candidates per query, beside the ``balanced`` search it would follow."""
    import onnxruntime as ort
    import torch
    import transformers

    from toolret import ToolKnowledgeBase
    from toolret.training.export import _weight_only_int8

    model = CrossEncoder(torch, transformers)
    state = torch.load(out / f"{fold}.pt")
    model.encoder.load_state_dict(state["encoder"])
    model.head.load_state_dict(state["head"])
    model.train(False)

    class Scorer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder, self.head = model.encoder, model.head

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            h = self.encoder(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            w = attention_mask.unsqueeze(-1).to(h.last_hidden_state.dtype)
            pooled = (h.last_hidden_state * w).sum(1) / w.sum(1).clamp(min=1e-9)
            return self.head(pooled).squeeze(-1)

    fp32, int8 = out / f"{fold}-fp32.onnx", out / f"{fold}-int8.onnx"
    ids = torch.ones((2, 16), dtype=torch.long)
    axes = {n: {0: "batch", 1: "seq"} for n in ("input_ids", "attention_mask", "token_type_ids")}
    with torch.no_grad():
        torch.onnx.export(
            Scorer().eval(),
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(fp32),
            input_names=list(axes),
            output_names=["logit"],
            dynamic_axes={**axes, "logit": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )
    _weight_only_int8(fp32, int8)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    session = ort.InferenceSession(str(int8), opts, providers=["CPUExecutionProvider"])
    ds = load_dataset(root / "apibench")
    kb = ToolKnowledgeBase(None)
    kb.add(ds.tool_docs(), progress=False)
    docs = {d.id: d for d in ds.tool_docs()}
    search_ms, rerank_ms, diffs = [], [], []
    for q in ds.sample(60, seed=0).queries:
        t0 = time.perf_counter()
        res = kb.search(q.query, k=TOP_N, config="balanced")
        t1 = time.perf_counter()
        pairs = [(q.query, ce_text(docs[t.id])) for t in res.tools]
        enc = model.tok.encode_batch(pairs, add_special_tokens=True)
        n = max(len(e.ids) for e in enc)
        arr = {k: np.zeros((len(enc), n), np.int64) for k in axes}
        for i, e in enumerate(enc):
            arr["input_ids"][i, : len(e.ids)] = e.ids
            arr["token_type_ids"][i, : len(e.ids)] = e.type_ids
            arr["attention_mask"][i, : len(e.ids)] = 1
        logits = session.run(None, arr)[0]
        t2 = time.perf_counter()
        search_ms.append((t1 - t0) * 1000)
        rerank_ms.append((t2 - t1) * 1000)
        diffs.append(float(np.abs(logits - model.score([p[0] for p in pairs], [p[1] for p in pairs])).max()))
    print(
        f"{fold} cross-encoder, int8 ONNX {int8.stat().st_size / 1e6:.1f} MB (fp32 {fp32.stat().st_size / 1e6:.1f} MB): "
        f"balanced search p50 {np.median(search_ms[5:]):.1f} ms, rerank of {TOP_N} p50 {np.median(rerank_ms[5:]):.1f} ms, "
        f"p95 {np.percentile(rerank_ms[5:], 95):.1f} ms; max |int8 - fp32 torch| logit {max(diffs):.3f}"
    )


def report(sigs: dict, data: dict, ce: dict, out: Path) -> None:
    def delta(n: str, alpha: float) -> tuple[float, float, float, float]:
        s0 = data[n][2]
        mask = np.isfinite(ce[n])
        mixed = alpha * query_z(np.nan_to_num(ce[n]), mask) + (1 - alpha) * query_z(s0, mask)
        r0, n0 = recall_ndcg(s0, sigs[n])
        r1, n1 = recall_ndcg(np.where(mask, 1000 + mixed, s0), sigs[n])
        return r0, r1, n0, n1

    print(f"\nRerank fast's top {TOP_N}: R@5 (NDCG@10) fast -> mix, per fixed weight of the cross-encoder")
    table = {alpha: {n: delta(n, alpha) for n in sigs} for alpha in ALPHAS}
    for alpha in ALPHAS:
        d = [table[alpha][n][1] - table[alpha][n][0] for n in sigs]
        print(f"- alpha {alpha:.2f}: mean dR@5 {np.mean(d):+.4f}, worst {min(d):+.4f}")
    print("\nWeight chosen leave-one-out (best mean dR@5 on the other folds' left-out sets):")
    deltas = []
    for fold, left in FOLDS.items():
        others = [n for f, ss in FOLDS.items() if f != fold for n in ss]
        best = max(ALPHAS, key=lambda al: np.mean([table[al][n][1] - table[al][n][0] for n in others]))
        for n in left:
            r0, r1, n0, n1 = table[best][n]
            deltas.append(r1 - r0)
            print(f"- {n}: alpha {best:.2f}  R@5 {r0:.3f} -> {r1:.3f}  NDCG@10 {n0:.3f} -> {n1:.3f}")
    print(f"  mean dR@5 {np.mean(deltas):+.4f}, worst {min(deltas):+.4f}")
    for f in FOLDS:
        p = out / f"{f}.json"
        if p.exists():
            m = json.loads(p.read_text())
            print(f"  {f}: {m['groups']} groups, train {m['train_s']:.0f} s, {m['pairs'] / m['score_s']:.0f} pairs/s")


if __name__ == "__main__":
    main()
