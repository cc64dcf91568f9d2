"""Stage ablation: each stage really switched off, and the leave-one-out verdict it gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolret import RetrievalConfig
from toolret.cli import main
from toolret.eval.folds import DEV_SETS, registry_folds
from toolret.eval.folds import FOLDS as DEV_FOLDS
from toolret.eval.stage_ablation import NOISE, STAGES_OFF, stage_configs, stage_table, verdicts

BASE = RetrievalConfig.preset("balanced")
FOLDS = {"toole": ["toole_single", "toole_multi"], "bfcl": ["bfcl"], "apibench": ["apibench"]}


def test_every_row_switches_off_one_stage_of_the_preset():
    rows = dict(stage_configs(BASE))
    assert rows.pop("balanced") == BASE
    assert list(rows) == list(STAGES_OFF)

    def settings(cfg):  # every setting by its dotted name: a group's settings one by one
        out = {}
        for key, value in cfg.model_dump().items():
            out.update({f"{key}.{k}": v for k, v in value.items()} if isinstance(value, dict) else {key: value})
        return out

    base = settings(BASE)
    changed = {label: {k for k, v in settings(cfg).items() if v != base[k]} for label, cfg in rows.items()}
    assert changed == {
        "-penalty": {"penalty.enabled"},
        "-name boost": {"fusion.name_match_boost", "fusion.exact_name_boost"},
        "-evidence weighting": {"fusion.evidence_slope"},
        "-hubness correction": {"fusion.hubness_weight"},
        "-planner": {"planner"},
        "-split gate": {"planning.split_gate"},
        "-dependencies": {"dependencies.enabled"},
    }
    assert not rows["-penalty"].penalty.enabled and not rows["-dependencies"].dependencies.enabled


def test_the_ablation_leaves_out_the_same_registries_as_model_training():
    assert registry_folds(DEV_SETS) == {fold: list(sets) for fold, sets in DEV_FOLDS.items()}
    # a registry the folds do not know (a held-out set under another root) leaves alone, even with a "_"
    assert registry_folds(["toole_multi", "acme_tools", "toole_single"]) == {
        "toole": ["toole_multi", "toole_single"],
        "acme_tools": ["acme_tools"],
    }


def _rows(effect: dict[str, float]) -> dict[str, dict[str, dict[str, float]]]:
    """Every set at R@5 = TRACC = 0.5 under the base; switching '-penalty' off changes both by effect[set]."""
    out = {}
    for name, d in effect.items():
        row = {label: {"recall@5": 0.5, "ndcg@10": 0.5, "tracc": 0.5} for label in ["balanced", *STAGES_OFF]}
        row["-penalty"] = {"recall@5": 0.5 + d, "ndcg@10": 0.5, "tracc": 0.5 + d}
        out[name] = row
    return out


def test_a_stage_that_helps_everywhere_is_kept_and_one_that_never_helps_is_removed():
    helps = _rows({n: -0.02 for f in FOLDS.values() for n in f})  # off: 0.02 lower everywhere
    assert verdicts(helps, FOLDS, "balanced")["-penalty"] == (3, "keep")
    useless = _rows({n: NOISE / 2 for f in FOLDS.values() for n in f})  # within noise: no gain to keep it for
    assert verdicts(useless, FOLDS, "balanced")["-penalty"] == (0, "remove")
    assert verdicts(useless, FOLDS, "balanced")["-planner"] == (0, "remove")  # no effect at all


def test_a_stage_that_helps_one_registry_only_is_mixed():
    # Only bfcl gains from it: the fold that leaves bfcl out sees no gain on its training sets.
    one = _rows({"toole_single": 0.0, "toole_multi": 0.0, "bfcl": -0.09, "apibench": 0.0})
    assert verdicts(one, FOLDS, "balanced")["-penalty"] == (2, "mixed")
    table = stage_table(one, FOLDS, "balanced")
    line = next(row for row in table.splitlines() if row.startswith("-penalty"))
    assert "-0.090 / -0.090" in line and "2 of 3 | mixed" in line


@pytest.mark.slow
def test_bench_ablation_prints_and_saves_the_stage_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "tiny"
    folder.mkdir()
    tools = [
        {"id": "get_weather", "name": "get_weather", "description": "Current weather for a city."},
        {"id": "send_email", "name": "send_email", "description": "Send an e-mail to a recipient."},
        {"id": "convert_currency", "name": "convert_currency", "description": "Convert money between currencies."},
    ]
    queries = [
        {"id": "q1", "query": "is it raining in Paris", "relevant": ["get_weather"]},
        {
            "id": "q2",
            "query": "mail Ana the report, then convert 20 euros to yen",
            "relevant": ["send_email", "convert_currency"],
        },
    ]
    (folder / "tools.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tools))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    out = tmp_path / "bench"
    assert main(["bench", "--datasets-root", str(tmp_path), "--limit", "0", "--out", str(out), "--ablate"]) == 0
    rows = json.loads((out / "bench.json").read_text())["stage_ablation"]["tiny"]
    assert list(rows) == ["balanced", *STAGES_OFF]
    assert rows["balanced"]["recall@5"] == 1.0 and 0 < rows["balanced"]["tracc"] <= 1
    markdown = (out / "bench.md").read_text()
    assert "## Stage ablation" in markdown and "-dependencies |" in markdown
    assert "folds keeping" in capsys.readouterr().out
