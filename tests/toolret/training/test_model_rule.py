"""The rule for a model default: left-out means gain, no registry loses significantly."""

from __future__ import annotations

from typing import Any

import pytest

from toolret.training.lodo_table import format_rows
from toolret.training.model_rule import MAX_SIGNIFICANT_LOSS, bootstrap_interval, check_rule


def _scores(recalls: list[float], ndcg: list[float] | None = None) -> dict[str, Any]:
    ndcg = recalls if ndcg is None else ndcg
    one = {
        "recall@5": sum(recalls) / len(recalls),
        "ndcg@10": sum(ndcg) / len(ndcg),
        "tracc": 0.5,
        "per_query": {"recall@5": recalls, "ndcg@10": ndcg},
    }
    return {"fast": one, "balanced": one}


def _row(name: str, fold: str, stock: list[float], trained: list[float]) -> dict[str, Any]:
    return {"set": name, "fold": fold, "stock": _scores(stock), "trained": _scores(trained)}


def test_a_small_noisy_loss_does_not_veto_when_the_mean_gains() -> None:
    # 20 queries, one lost (-0.05 on the set): the interval reaches above -0.02, so no veto.
    small = _row("spotify", "restbench", [1.0] * 20, [1.0] * 19 + [0.0])
    gains = _row("bfcl", "bfcl", [0.0] * 50 + [1.0] * 50, [0.0] * 40 + [1.0] * 60)
    verdict = check_rule([small, gains])
    assert verdict.met, verdict.reasons
    interval = next(i for i in verdict.intervals if i.fold == "restbench" and i.preset == "fast")
    assert interval.mean == pytest.approx(-0.05) and interval.high > MAX_SIGNIFICANT_LOSS


def test_a_consistent_loss_on_a_large_registry_fails_the_rule() -> None:
    # 400 queries, 40 lost and none gained: the whole interval lies below -0.02.
    big = _row("apibench", "apibench", [1.0] * 400, [1.0] * 360 + [0.0] * 40)
    gains = _row("toole_single", "toole", [0.0] * 400, [1.0] * 100 + [0.0] * 300)
    verdict = check_rule([big, gains])
    assert not verdict.met
    assert any("apibench" in r and "below" in r for r in verdict.reasons)


def test_a_negative_mean_fails_even_without_a_significant_registry() -> None:
    verdict = check_rule([_row("a", "a", [1.0] * 10, [1.0] * 9 + [0.0])])
    assert not verdict.met
    assert any("mean" in r for r in verdict.reasons)


def test_two_sets_of_one_registry_share_one_interval() -> None:
    rows = [_row("toole_single", "toole", [1.0] * 10, [1.0] * 10), _row("toole_multi", "toole", [0.0] * 5, [1.0] * 5)]
    intervals = [i for i in check_rule(rows).intervals if i.preset == "fast"]
    assert [(i.fold, i.n_queries) for i in intervals] == [("toole", 15)]


def test_unpaired_or_aggregate_only_scores_are_refused() -> None:
    with pytest.raises(ValueError, match="not paired"):
        check_rule([_row("a", "a", [1.0] * 10, [1.0] * 9)])
    row = _row("a", "a", [1.0], [1.0])
    del row["trained"]["fast"]["per_query"]
    with pytest.raises(ValueError, match="per-query"):
        check_rule([row])


def test_bootstrap_interval_is_reproducible_and_brackets_the_mean() -> None:
    deltas = [0.0] * 30 + [1.0] * 10 + [-1.0] * 5
    low, high = bootstrap_interval(deltas)
    assert (low, high) == bootstrap_interval(deltas)
    assert low < sum(deltas) / len(deltas) < high


def test_fold_table_prints_every_set_the_means_and_the_verdict() -> None:
    text = format_rows([_row("toole_single", "toole", [0.0, 1.0], [1.0, 1.0]), _row("bfcl", "bfcl", [1.0], [1.0])])
    assert "| toole_single |" in text and "| bfcl |" in text
    assert "fast: left-out mean ΔR@5 +0.2500" in text
    assert text.rstrip().endswith("met")


def test_bench_rows_pair_two_embedders_of_one_bench_run() -> None:
    from toolret.training.lodo_table import bench_rows

    def entry(dataset: str, preset: str, embedder: str, recalls: list[float]) -> dict[str, Any]:
        mean = sum(recalls) / len(recalls)
        return {
            "dataset": dataset,
            "preset": preset,
            "embedder": embedder,
            "split": "all",
            "level": "id",
            "metrics": {"recall@5": mean, "ndcg@10": mean, "tracc": 0.3},
            "per_query": {"recall@5": recalls, "ndcg@10": recalls},
        }

    results = [entry("taubench", p, "mini", [1.0, 1.0]) for p in ("fast", "balanced")]
    results += [entry("taubench", p, "stock", [1.0, 0.0]) for p in ("fast", "balanced")]
    results += [entry("bfcl", "fast", "mini", [1.0])]  # no stock rows: skipped, not half-paired
    rows = bench_rows({"results": results}, "mini", "stock", ["taubench", "bfcl"])
    assert [r["set"] for r in rows] == ["taubench"]
    assert check_rule(rows).means["fast"]["recall@5"] == 0.5


def test_requests_in_the_users_words_must_gain_and_the_registrys_must_not_fall() -> None:
    flat_natural = _row("banking77", "banking77", [0.0] * 5 + [1.0] * 5, [0.0] * 5 + [1.0] * 5)
    gains_registry = _row("bfcl", "bfcl", [0.0] * 10, [1.0] * 10)
    verdict = check_rule([flat_natural, gains_registry])
    # The overall mean gains, but the natural group's does not: the issue-42 rule is not met.
    assert verdict.means["fast"]["recall@5"] > 0
    assert not verdict.met
    assert any("user's own words" in r and "no gain" in r for r in verdict.reasons)

    gains_natural = _row("slack_web", "slack_web", [0.0] * 10, [0.0] * 8 + [1.0] * 2)
    flat_registry = _row("bfcl", "bfcl", [1.0] * 10, [1.0] * 10)
    verdict = check_rule([gains_natural, flat_registry])
    assert verdict.met, verdict.reasons
    assert verdict.group_means["natural"]["fast"]["recall@5"] == pytest.approx(0.2)
    assert verdict.group_means["registry"]["balanced"]["recall@5"] == 0.0
    assert "user's own words ΔR@5 +0.2000" in format_rows([gains_natural, flat_registry])


def test_the_fold_tables_baseline_is_the_stock_model_not_the_default(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import json

    import toolret.training.benchmarks as benchmarks
    from toolret.index.embedding import STOCK_EMBEDDER_NAME
    from toolret.training.lodo_table import stock_scores

    seen: list[str] = []

    def fake_evaluate(root, sets, embedder):  # type: ignore[no-untyped-def]
        seen.append(embedder.name)
        return {s: _scores([1.0]) for s in sets}

    monkeypatch.setattr(benchmarks, "evaluate_model", fake_evaluate)
    cache = tmp_path / "stock.json"
    cache.write_text(json.dumps({"a": _scores([0.0])}))  # a cache of the default model's scores, from before
    assert stock_scores("root", ["a"], cache)["a"]["fast"]["recall@5"] == 1.0
    assert seen == [STOCK_EMBEDDER_NAME]
    assert stock_scores("root", ["a"], cache)["a"]["fast"]["recall@5"] == 1.0 and len(seen) == 1  # cached now
