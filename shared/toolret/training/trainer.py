"""Fine-tune the packaged MiniLM on (request, tool document) pairs, on CPU, resumable.

The recipe is the Tool-DE paper's Tool-Embed at laptop scale: a contrastive loss over in-batch
negatives (InfoNCE, temperature 1/20, as sentence-transformers' MultipleNegativesRankingLoss),
batches planned by :mod:`toolret.training.batches` (one registry per batch, no false negatives),
AdamW with linear warm-up and decay, mean pooling as the engine's embedder does at search time.

It is a plain torch loop rather than sentence-transformers' Trainer: the batches must be exactly
the planned ones (the Trainer reshuffles), and a run must stop and resume at any step. Every
``save_every`` steps the model, optimiser, schedule and random state go to ``out/checkpoint``
(tensors only, loaded with ``weights_only=True``); calling :func:`train` again with the same
pairs and settings continues from there, so a run longer than a working session finishes in the
next one. A checkpoint made from other pairs or settings is refused rather than silently mixed.

Needs the ``train`` extra (``pip install 'toolret[train]'``: CPU torch and transformers);
searching never imports this module.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from toolret.errors import ConfigError, MissingDependencyError
from toolret.training.batches import batch_columns, plan_batches
from toolret.training.pairs import TrainingPair

__all__ = ["TrainConfig", "TrainResult", "base_identity", "base_model_dir", "blend_with_base", "train"]

logger = logging.getLogger("toolret")

#: Requests are short; documents are cut here (the index embeds up to 256 tokens, but 128 holds
#: the name and description of 99% of the dev-set tools, and a step's cost grows with the length).
MAX_QUERY_TOKENS = 64
MAX_DOC_TOKENS = 128


class TrainConfig(BaseModel):
    """The recipe. Defaults are the shipped model's (docs/models.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    epochs: float = Field(default=1.0, gt=0, description="Passes over the planned batches (fractions allowed).")
    batch_size: int = Field(default=32, ge=2)
    learning_rate: float = Field(default=5e-5, gt=0)
    warmup: float = Field(default=0.1, ge=0, lt=1, description="Share of the steps spent warming up.")
    scale: float = Field(default=20.0, gt=0, description="Cosine scale of the InfoNCE logits (1/temperature).")
    seed: int = 0
    threads: int = Field(default=2, ge=1, description="torch CPU threads.")
    save_every: int = Field(default=25, ge=1, description="Steps between checkpoints.")
    all_fields: bool = Field(
        default=False,
        description="Documents drawn from every indexed field with the search's field weights, not only "
        "the description (toolret.training.pairs.pairs_from_bundles).",
    )
    registry_floor: int = Field(
        default=0,
        ge=0,
        description="Pairs a registry is repeated up to when it has fewer (benchmark training only): "
        "without it a registry of 146 requests gets 8 of 560 batches and its share of what the model "
        "learns shrinks as the intent sets join (docs/models.md).",
    )
    hard_negatives: int = Field(
        default=0,
        ge=0,
        description="Mined hard negatives per pair added to each batch as extra documents "
        "(:mod:`toolret.training.negatives`); 0 trains on in-batch negatives only.",
    )
    keep: float = Field(
        default=1.0,
        gt=0,
        le=1,
        description="Share of the fine-tuned weights in the exported model; the rest is the base model's "
        "(WiSE-FT weight interpolation, :func:`blend_with_base`). Applied after training.",
    )

    def fingerprint(self, pairs: Sequence[TrainingPair], base: str) -> str:
        """Hash of the settings, the base model and the pairs: a checkpoint resumes only the same run.

        ``keep`` acts after training and ``all_fields`` through the pairs, so neither is hashed twice.
        """
        h = hashlib.sha256(self.model_dump_json(exclude={"threads", "save_every", "keep", "all_fields"}).encode())
        h.update(base.encode())
        for p in pairs:
            h.update(f"{p.registry}\x1f{p.query}\x1f{p.tool_id}\x1f{p.document}\x1e".encode())
            for n in p.negatives[: self.hard_negatives]:
                h.update(f"{n.tool_id}\x1f{n.document}\x1d".encode())
        return h.hexdigest()


class TrainResult(BaseModel):
    """What a run did: where the model is, how many steps, the loss curve's ends, the time."""

    model_dir: str
    steps: int
    total_steps: int
    resumed_from: int
    first_loss: float | None
    last_loss: float | None
    seconds: float
    pairs: int
    batches_per_epoch: int

    @property
    def finished(self) -> bool:
        """Whether every planned step ran (the model was saved); False after a ``max_steps`` stop."""
        return self.steps >= self.total_steps


def base_model_dir() -> Path:
    """The packaged all-MiniLM-L6-v2 (torch weights, tokenizer): the starting point of every run."""
    from toolret.index.embedding import default_model_path

    return Path(default_model_path(extra="train"))


def base_identity(base_dir: Path) -> str:
    """What a checkpoint records of its starting model: the weights' sha256, not the folder's path.

    Stage 2 of the recipe starts from stage 1's output; naming that by content lets a finished
    stage move (or be rebuilt bit for bit) without orphaning the run that continues from it.
    """
    for name in ("model.safetensors", "pytorch_model.bin"):
        weights = base_dir / name
        if weights.is_file():
            digest = hashlib.sha256()
            with weights.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
            return f"sha256:{digest.hexdigest()}"
    return str(base_dir)


def _imports() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError:
        raise MissingDependencyError("torch and transformers", purpose="training", extra="train") from None
    return torch, transformers


def _tokenizer(model_dir: Path) -> Any:
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(model_dir / "tokenizer.json"))


def _encode(torch: Any, model: Any, tokenizer: Any, texts: list[str], max_tokens: int) -> Any:
    """Mean-pooled, L2-normalised vectors, as :class:`toolret.index.onnx_embedding.OnnxEmbedder` pools."""
    tokenizer.enable_truncation(max_tokens)
    tokenizer.no_padding()
    rows = [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=True)]
    longest = max(len(r) for r in rows)
    ids = torch.zeros((len(rows), longest), dtype=torch.long)
    mask = torch.zeros((len(rows), longest), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r)
        mask[i, : len(r)] = 1
    hidden = model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).last_hidden_state
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, dim=-1)


def _schedule(step: int, total: int, warmup_steps: int) -> float:
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    return max(0.0, (total - step) / max(1, total - warmup_steps))


def train(
    pairs: Sequence[TrainingPair],
    out: str | Path,
    config: TrainConfig | None = None,
    *,
    base: str | Path | None = None,
    max_steps: int | None = None,
    on_step: Callable[[int, int, float], None] | None = None,
) -> TrainResult:
    """Train on ``pairs``; the fine-tuned model (transformers format + tokenizer) lands in ``out/model``.

    ``max_steps`` stops early after that many steps of this call (the checkpoint is kept, a later
    call resumes); ``on_step(step, total, loss)`` reports progress. Returns a :class:`TrainResult`.
    """
    cfg = config or TrainConfig()
    torch, transformers = _imports()
    base_dir = Path(base) if base is not None else base_model_dir()
    out = Path(out)
    if not pairs:
        raise ConfigError("no training pairs: give at least one (request, tool) pair per registry")
    batches = plan_batches(pairs, batch_size=cfg.batch_size, seed=cfg.seed)
    if not batches:
        raise ConfigError(f"{len(pairs)} pairs make no batch of two conflict-free pairs; add pairs with other tools")
    total = max(1, math.ceil(len(batches) * cfg.epochs))
    warmup_steps = max(1, int(total * cfg.warmup))
    fingerprint = cfg.fingerprint(pairs, base_identity(base_dir))

    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    model = transformers.AutoModel.from_pretrained(str(base_dir))
    model.train()
    tokenizer = _tokenizer(base_dir)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.learning_rate, weight_decay=0.01)
    lr_schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: _schedule(s, total, warmup_steps))

    ckpt = out / "checkpoint"
    start = 0
    if (ckpt / "state.json").is_file():
        state = json.loads((ckpt / "state.json").read_text())
        if state.get("fingerprint") != fingerprint:
            raise ConfigError(
                f"{ckpt} holds a checkpoint of another run (other pairs, settings or base model); "
                "remove it or train into another folder"
            )
        tensors = torch.load(ckpt / "tensors.pt", weights_only=True)
        model.load_state_dict(tensors["model"])
        optimizer.load_state_dict(tensors["optimizer"])
        lr_schedule.load_state_dict(tensors["schedule"])
        torch.set_rng_state(tensors["rng"])
        start = int(state["step"])
        logger.info("resuming training at step %d of %d from %s", start, total, ckpt)

    losses: list[float] = list(json.loads((ckpt / "state.json").read_text())["losses"]) if start else []
    began = time.perf_counter()
    stop = total if max_steps is None else min(total, start + max_steps)
    step = start
    for step in range(start, stop):
        batch = batches[step % len(batches)]
        documents, masked = batch_columns(batch, cfg.hard_negatives)
        q = _encode(torch, model, tokenizer, [p.query for p in batch], MAX_QUERY_TOKENS)
        d = _encode(torch, model, tokenizer, documents, MAX_DOC_TOKENS)
        logits = cfg.scale * q @ d.T
        if any(masked):
            hide = torch.zeros(logits.shape, dtype=torch.bool)
            for row, columns in enumerate(masked):
                hide[row, sorted(columns)] = True
            logits = logits.masked_fill(hide, float("-inf"))
        loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(batch)))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        lr_schedule.step()
        losses.append(float(loss.detach()))
        if on_step is not None:
            on_step(step + 1, total, losses[-1])
        if (step + 1) % cfg.save_every == 0 or step + 1 == stop:
            _save_checkpoint(torch, ckpt, model, optimizer, lr_schedule, step + 1, fingerprint, losses)
    done = stop if stop > start else start
    model_dir = out / "model"
    if done == total:
        model.save_pretrained(str(model_dir))
        shutil.copy(base_dir / "tokenizer.json", model_dir / "tokenizer.json")
    return TrainResult(
        model_dir=str(model_dir),
        steps=done,
        total_steps=total,
        resumed_from=start,
        first_loss=losses[0] if losses else None,
        last_loss=losses[-1] if losses else None,
        seconds=round(time.perf_counter() - began, 1),
        pairs=len(pairs),
        batches_per_epoch=len(batches),
    )


def _save_checkpoint(
    torch: Any, ckpt: Path, model: Any, optimizer: Any, schedule: Any, step: int, fingerprint: str, losses: list[float]
) -> None:
    """Write the checkpoint beside the old one, then swap: a run killed mid-write keeps the previous."""
    tmp = ckpt.with_name(ckpt.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    torch.save(
        {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "schedule": schedule.state_dict(),
            "rng": torch.get_rng_state(),
        },
        tmp / "tensors.pt",
    )
    (tmp / "state.json").write_text(json.dumps({"step": step, "fingerprint": fingerprint, "losses": losses}))
    old = ckpt.with_name(ckpt.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if ckpt.exists():
        ckpt.rename(old)
    tmp.rename(ckpt)
    shutil.rmtree(old, ignore_errors=True)


def blend_with_base(model_dir: str | Path, keep: float, out_dir: str | Path, *, base: str | Path | None = None) -> Path:
    """Write ``keep * fine-tuned + (1 - keep) * base`` weights to ``out_dir`` (WiSE-FT; Wortsman et al. 2022).

    Interpolating a fine-tuned model's weights with its starting point keeps most of what it
    learned on the training distribution and loses less on others; the share is chosen leaving
    one registry out (docs/models.md). ``keep=1`` copies the fine-tuned model.
    """
    torch, transformers = _imports()
    base_dir = Path(base) if base is not None else base_model_dir()
    tuned = transformers.AutoModel.from_pretrained(str(model_dir))
    if keep < 1:
        start = transformers.AutoModel.from_pretrained(str(base_dir)).state_dict()
        mixed = {
            k: (keep * v + (1 - keep) * start[k]) if v.is_floating_point() else v for k, v in tuned.state_dict().items()
        }
        tuned.load_state_dict(mixed)
    out = Path(out_dir)
    tuned.save_pretrained(str(out))
    shutil.copy(Path(model_dir) / "tokenizer.json", out / "tokenizer.json")
    return out
