"""Train fold embedders on an accelerator from ``experiments/gpu_prep.py``'s bundle (torch only).

The loop is :func:`toolret.training.trainer.train`'s (same batches, loss, schedule, pooling,
token limits, seed), with one addition under test: each pair's first ``hard`` engine-mined hard
negatives join the batch as extra documents. A negative is masked out of a request's row when it
is relevant to that request or shares a name with one of its relevant tools, so a batch never
holds a false negative. After training, the fold model embeds the texts the engine embeds when it
evaluates the fold's left-out sets; ``experiments/gpu_eval.py`` scores the whole pipeline with them.

This script imports neither toolret nor its dependencies: the machine it runs on has torch,
transformers and tokenizers only. One process trains one fold; run the folds side by side.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import time
from pathlib import Path

import numpy as np
import torch
import transformers
from tokenizers import Tokenizer

MAX_QUERY_TOKENS = 64
MAX_DOC_TOKENS = 128
EMBED_TOKENS = 256  # toolret.index.onnx_embedding.MAX_TOKENS

VARIANTS: dict[str, dict[str, float]] = {
    "recipe": {"hard": 0, "epochs": 1},
    "hn1": {"hard": 1, "epochs": 1},
    "hn3": {"hard": 3, "epochs": 1},
    "hn3e3": {"hard": 3, "epochs": 3},
    "hn1e3": {"hard": 1, "epochs": 3},
    "e3": {"hard": 0, "epochs": 3},
    "hn7": {"hard": 7, "epochs": 1},
    "hn7e3": {"hard": 7, "epochs": 3},
    # Negatives from the engine's rank 10 on: its first results hold unlabelled right answers
    # (ToolE labels one tool where several serve), which the plain variants above pushed away.
    "hn1s10": {"hard": 1, "epochs": 1, "skip": 10},
    "hn3s10": {"hard": 3, "epochs": 1, "skip": 10},
    "hn1s10e3": {"hard": 1, "epochs": 3, "skip": 10},
    "e2": {"hard": 0, "epochs": 2},
    "lr2": {"hard": 0, "epochs": 1, "lr": 2e-5},
    "e3lr2": {"hard": 0, "epochs": 3, "lr": 2e-5},
    "smoke": {"hard": 2, "epochs": 0.02},
}


def encode(model, tokenizer, texts, max_tokens, device):
    # toolret.training.trainer._encode with a device: importing it would load toolret and its
    # dependencies, which the accelerator machine does not have. Keep the two in step.
    tokenizer.enable_truncation(max_tokens)
    tokenizer.no_padding()
    rows = [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=True)]
    longest = max(len(r) for r in rows)
    ids = torch.zeros((len(rows), longest), dtype=torch.long)
    mask = torch.zeros((len(rows), longest), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r)
        mask[i, : len(r)] = 1
    ids, mask = ids.to(device), mask.to(device)
    hidden = model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).last_hidden_state
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, dim=-1)


def batch_tensors(bundle, batch, hard, skip=0):
    """Queries, documents (positives, then unique hard negatives) and the false-negative mask:
    toolret.training.batches.batch_columns over the bundle's ids and names, for the same reason."""
    pairs, docs, names = bundle["pairs"], bundle["docs"], bundle["names"]
    rows = [pairs[i] for i in batch]
    registry = rows[0]["registry"]
    columns = [r["tool"] for r in rows]
    for r in rows:
        chosen = [t for t, rank in zip(r["negatives"], r.get("ranks", [])) if rank >= skip] if skip else r["negatives"]
        for t in chosen[:hard]:
            if t not in columns:
                columns.append(t)
    mask = torch.zeros((len(rows), len(columns)), dtype=torch.bool)
    for i, r in enumerate(rows):
        relevant = set(r["relevant"])
        rel_names = {names[registry][t] for t in relevant}
        for c, t in enumerate(columns):
            if c != i and (t in relevant or names[registry][t] in rel_names):
                mask[i, c] = True
    return [r["query"] for r in rows], [docs[registry][t] for t in columns], mask


def train(bundle, base, fold, spec, device, deadline):
    random.seed(0)
    torch.manual_seed(0)
    model = transformers.AutoModel.from_pretrained(base, dtype=torch.float32).to(device)
    model.train()
    tokenizer = Tokenizer.from_file(str(Path(base) / "tokenizer.json"))
    lr = spec.get("lr", 5e-5)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    batches = bundle["plans"][fold]
    total = max(1, math.ceil(len(batches) * spec["epochs"]))
    warm = max(1, int(total * 0.1))

    def schedule(s):
        return (s + 1) / warm if s < warm else max(0.0, (total - s) / max(1, total - warm))

    lr_schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    losses = []
    for step in range(total):
        if time.time() > deadline:
            return None, losses
        queries, documents, mask = batch_tensors(
            bundle, batches[step % len(batches)], int(spec["hard"]), int(spec.get("skip", 0))
        )
        q = encode(model, tokenizer, queries, MAX_QUERY_TOKENS, device)
        d = encode(model, tokenizer, documents, MAX_DOC_TOKENS, device)
        logits = spec.get("scale", 20.0) * q @ d.T
        logits = logits.masked_fill(mask.to(device), float("-inf"))
        loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(queries), device=device))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        lr_schedule.step()
        losses.append(float(loss.detach()))
    return model, losses


@torch.no_grad()
def embed_all(model, tokenizer, texts, device):
    model.eval()
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.zeros((len(texts), 384), dtype=np.float32)
    for s in range(0, len(order), 256):
        idx = order[s : s + 256]
        v = encode(model, tokenizer, [texts[i] for i in idx], EMBED_TOKENS, device)
        out[idx] = v.float().cpu().numpy()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundle", default=".gpu/bundle.json.gz")
    ap.add_argument("--base", default=".gpu/base")
    ap.add_argument("--fold", required=True)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--no-stock", action="store_true", help="skip the stock model's vectors (an earlier run has them)")
    ap.add_argument(
        "--save-model",
        default=None,
        help="also write each trained model there (float16 shards under 15 MB: the transfer's file limit)",
    )
    args = ap.parse_args()
    deadline = time.time() + args.seconds
    torch.backends.cuda.matmul.allow_tf32 = True
    device = "cuda" if torch.cuda.is_available() else "cpu"
    with gzip.open(args.bundle, "rt") as f:
        bundle = json.load(f)
    texts = [t for s in bundle["folds"].get(args.fold, []) for t in bundle["eval_texts"][s]]
    tokenizer = Tokenizer.from_file(str(Path(args.base) / "tokenizer.json"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = {}
    for name in [*([] if args.no_stock else ["stock"]), *args.variants.split(",")]:
        began = time.time()
        if name == "stock":
            model = transformers.AutoModel.from_pretrained(args.base, dtype=torch.float32).to(device)
            losses = []
        else:
            model, losses = train(bundle, args.base, args.fold, VARIANTS[name], device, deadline)
            if model is None:
                print(f"{args.fold} {name}: deadline at step {len(losses)}", flush=True)
                break
        if args.save_model and name != "stock":
            target = Path(args.save_model) / name
            model.half().save_pretrained(str(target), max_shard_size="15MB")
            model.float()
        vectors = embed_all(model, tokenizer, texts, device).astype(np.float32)
        # int8 with a per-vector scale: the transfer back takes 64 MiB, and seven models' vectors of
        # every left-out text in float16 would not fit; the stock row goes through the same rounding.
        scale = np.abs(vectors).max(axis=1, keepdims=True) / 127.0
        np.save(out / f"{name}-{args.fold}.npy", np.round(vectors / np.maximum(scale, 1e-12)).astype(np.int8))
        np.save(out / f"{name}-{args.fold}-scale.npy", scale.astype(np.float32))
        log[name] = {
            "steps": len(losses),
            "first_loss": losses[0] if losses else None,
            "last_loss": float(np.mean(losses[-20:])) if losses else None,
            "seconds": round(time.time() - began, 1),
        }
        print(args.fold, name, log[name], flush=True)
        (out / f"log-{args.fold}.json").write_text(json.dumps(log))


if __name__ == "__main__":
    main()
