"""MFTR scoring: field weights, renormalisation over present fields, the parameter penalty."""

from __future__ import annotations

import numpy as np
import pytest

from toolret import (
    FieldWeights,
    PenaltyConfig,
    RetrievalConfig,
    ToolDoc,
    ToolKnowledgeBase,
    ToolParam,
)
from toolret.scoring.arguments import spot_arguments
from toolret.scoring.mftr import (
    FieldSignals,
    lexical_strength,
    normalize_field,
    parameter_penalty,
    query_beta,
    score_candidates,
)


def _fast() -> RetrievalConfig:
    """The fast preset with the hand-set formula these tests pin (the learned fusion: test_learned_fusion.py)."""
    return RetrievalConfig.preset("fast").with_(fusion="heuristic")


def _signals(n: int, **fields):
    names = ("description", "parameters", "response", "examples")
    lex = {f: np.asarray(fields.get(f"lex_{f}", [0.0] * n), dtype=np.float32) for f in names}
    dense = {f: np.asarray(fields.get(f"dense_{f}", [0.0] * n), dtype=np.float32) for f in names}
    present = {f: np.asarray(fields.get(f"has_{f}", [True] * n)) for f in names}
    bound = {f: fields.get(f"bound_{f}", 0.0) for f in names}
    return FieldSignals(candidates=np.arange(n), lexical=lex, lexical_bound=bound, dense=dense, present=present)


def test_score_is_weighted_sum_of_hybrid_field_scores():
    cfg = _fast().model_copy(
        update={
            "fusion": {"lexical_weight": 0.5, "evidence_slope": 0.0, "strength_slope": 0.0, "min_field_pool": 0},
            "penalty": PenaltyConfig(enabled=False),
            "field_weights": FieldWeights(description=0.35, parameters=0.25),
        }
    )
    docs = [ToolDoc(name="a", description="x"), ToolDoc(name="b", description="y")]
    sig = _signals(
        2,
        lex_description=[2.0, 1.0],
        dense_description=[0.8, 0.4],
        lex_parameters=[0.0, 0.0],
        dense_parameters=[0.2, 0.6],
        bound_description=4.0,
        has_response=[False, False],
        has_examples=[False, False],
    )
    ranked = score_candidates(sig, docs, cfg, args=[], query_words=set(), name_matches=set())
    per_field = {
        f: normalize_field(sig.lexical[f], sig.dense[f], sig.present[f], sig.lexical_bound[f], cfg)
        for f in ("description", "parameters")
    }
    hybrid = {f: 0.5 * lex + 0.5 * dense for f, (lex, dense) in per_field.items()}
    expected = (0.35 * hybrid["description"] + 0.25 * hybrid["parameters"]) / 0.6
    # + the embedder's anchor: cosine_weight x (description cosine - its pool mean 0.6)
    expected += cfg.fusion.cosine_weight * (np.array([0.8, 0.4]) - 0.6)
    by_index = {c.index: c for c in ranked}
    assert abs(by_index[0].score - expected[0]) < 1e-6
    assert abs(by_index[1].score - expected[1]) < 1e-6
    assert set(by_index[0].field_scores) == {"description", "parameters"}


def test_missing_fields_do_not_drag_a_tool_down():
    cfg = _fast().model_copy(update={"penalty": PenaltyConfig(enabled=False)})
    docs = [ToolDoc(name="sparse", description="x"), ToolDoc(name="rich", description="y")]
    sig = _signals(
        2,
        dense_description=[0.7, 0.7],
        has_parameters=[False, True],
        dense_parameters=[0.0, 0.0],
        has_response=[False, False],
        has_examples=[False, False],
    )
    ranked = score_candidates(sig, docs, cfg, args=[], query_words=set(), name_matches=set())
    assert ranked[0].index == 0 and ranked[0].score > ranked[1].score


def test_penalty_is_zero_when_query_carries_no_arguments():
    doc = ToolDoc(name="t", parameters=[ToolParam(name="n", type="integer", required=True)])
    cfg = _fast()
    assert parameter_penalty(doc, spot_arguments("compute a factorial"), {"compute", "factorial"}, cfg) == 0.0


def test_required_parameter_the_query_cannot_fill_is_penalized():
    cfg = _fast()
    query = "factorial of 7"
    args = spot_arguments(query)
    needs_number = ToolDoc(name="a", parameters=[ToolParam(name="n", type="integer", required=True)])
    needs_email = ToolDoc(name="b", parameters=[ToolParam(name="email", type="string", required=True)])
    optional_email = ToolDoc(name="c", parameters=[ToolParam(name="email", type="string", required=False)])
    p_num = parameter_penalty(needs_number, args, {"factorial", "7"}, cfg)
    p_mail = parameter_penalty(needs_email, args, {"factorial", "7"}, cfg)
    p_opt = parameter_penalty(optional_email, args, {"factorial", "7"}, cfg)
    assert p_num < 0.001 * cfg.penalty.scale
    assert p_mail > 0.9 * cfg.penalty.scale
    assert p_num < p_opt < p_mail


def test_tool_with_unfillable_required_param_ranks_below_an_otherwise_equal_tool(embedder):
    description = "Look up the record for a customer."
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add(
        [
            ToolDoc(
                id="by_id",
                name="lookup_record",
                description=description,
                parameters=[ToolParam(name="record_id", type="integer", required=True, description="Record number")],
            ),
            ToolDoc(
                id="by_email",
                name="lookup_record",
                description=description,
                parameters=[ToolParam(name="email", type="string", required=True, description="Record number")],
            ),
        ]
    )
    result = kb.search("look up the customer record 4412", k=2)
    assert result.ids == ["by_id", "by_email"]
    assert result.tools[1].penalty > result.tools[0].penalty
    result = kb.search("look up the customer record for jane@corp.com", k=2)
    assert result.ids == ["by_email", "by_id"]


def _six(lex, dense, bound=30.0):
    n = len(lex)
    return _signals(
        n,
        lex_description=lex,
        dense_description=dense,
        bound_description=bound,
        has_parameters=[False] * n,
        has_response=[False] * n,
        has_examples=[False] * n,
    )


#: A pool of 20 candidates: tool 0 is the only one matching the query's words (BM25 8 where the
#: rest get 0.2-0.7) with an ordinary cosine; tool 1 has the best cosine, by a little, and no word.
POOL_LEX = [8.0, 0.0, 0.5, 0.4, 0.6, 0.5, 0.3, 0.7, 0.2, 0.5, 0.6, 0.4, 0.3, 0.5, 0.6, 0.2, 0.4, 0.5, 0.3, 0.6]
POOL_DENSE = [
    0.36,
    0.47,
    0.15,
    0.168,
    0.185,
    0.203,
    0.221,
    0.238,
    0.256,
    0.274,
    0.291,
    0.309,
    0.326,
    0.344,
    0.362,
    0.379,
    0.397,
    0.415,
    0.432,
    0.45,
]


def test_pool_normalisation_ranks_a_strong_lexical_match_above_a_weak_dense_one():
    docs = [ToolDoc(name=f"t{i}", description="x") for i in range(20)]
    sig = _six(POOL_LEX, POOL_DENSE, bound=60.0)
    no_pen = {
        "penalty": PenaltyConfig(enabled=False),
        "evidence_slope": 0.0,
        "strength_slope": 0.0,
        "lexical_weight": 0.35,
        "cosine_weight": 0.0,
    }

    def top(**extra):
        cfg = _fast().model_copy(update={**no_pen, **extra})
        return score_candidates(sig, docs, cfg, args=[], query_words=set(), name_matches=set())[0].index

    # Over the candidate pool alone, BM25 8 is an outlier and a 0.47 cosine only the top of an even spread:
    # the ranking's default floor (2 % of the query's achievable BM25) lets it win.
    assert top() == top(lexical_sd_floor=0.02) == 0
    # With the unit floor (8 %), 8 of 60 is at most 1.7 sd: a match of 13 % of the query no longer
    # outvotes the best dense match.
    assert top(lexical_sd_floor=0.08) == 1


def test_the_field_evidence_reads_the_unit_floor_whatever_floor_orders_the_tools():
    """score - floor_shift is, tool by tool, the score the evidence's floor gives (k="auto" counts on it),
    while the ranking's own floor orders them; with one floor for both there is no shift."""
    from toolret.search.auto_k import field_evidence

    docs = [ToolDoc(name=f"t{i}", description="x") for i in range(20)]
    sig = _six(POOL_LEX, POOL_DENSE, bound=60.0)
    base = {"penalty": PenaltyConfig(enabled=False), "lexical_weight": 0.35, "cosine_weight": 0.0}
    evidence = _fast().model_copy(update={**base, "lexical_sd_floor": 0.08, "evidence_sd_floor": 0.08})
    ranking = _fast().model_copy(update={**base, "lexical_sd_floor": 0.02, "evidence_sd_floor": 0.08})

    def scored(cfg):
        ranked = score_candidates(sig, docs, cfg, args=[], query_words=set(), name_matches=set())
        return {c.index: c for c in ranked}

    at_unit, split = scored(evidence), scored(ranking)
    assert all(c.floor_shift == 0.0 for c in at_unit.values())
    assert max(abs(c.floor_shift) for c in split.values()) > 0.5  # the outlier moved
    for i, c in split.items():
        expected = at_unit[i].score - at_unit[i].strength_shift
        assert field_evidence(c) + c.anchor == pytest.approx(expected, abs=1e-9)


def test_pool_normalisation_does_not_depend_on_the_scale_of_a_signal():
    docs = [ToolDoc(name=f"t{i}", description="x") for i in range(6)]
    # The strength term reads BM25's scale on purpose (test_the_lexical_share_follows_the_strength_...);
    # what is checked here is the normalisation, at a fixed lexical share.
    cfg = _fast().model_copy(
        update={"penalty": PenaltyConfig(enabled=False), "cosine_weight": 0, "strength_slope": 0.0}
    )
    lex, dense = [3.0, 0.0, 1.5, 0.4, 0.6, 2.5], [0.30, 0.45, 0.33, 0.31, 0.29, 0.32]
    a = score_candidates(_six(lex, dense), docs, cfg, args=[], query_words=set(), name_matches=set())
    b = score_candidates(
        _six([10 * x for x in lex], dense, bound=300.0), docs, cfg, args=[], query_words=set(), name_matches=set()
    )
    assert [c.index for c in a] == [c.index for c in b]
    assert [c.score for c in a] == pytest.approx([c.score for c in b])
    assert a[0].field_scores["description"] == pytest.approx(a[0].score)  # one field: S = S_description


def test_lexical_share_follows_query_evidence():
    docs = [ToolDoc(name=f"t{i}", description="x") for i in range(20)]
    # the evidence term alone (the strength term has its own tests below)
    cfg = _fast().model_copy(update={"penalty": PenaltyConfig(enabled=False), "strength_slope": 0.0})
    lex, dense = POOL_LEX, POOL_DENSE

    def ranked(evidence):
        return [
            c.index
            for c in score_candidates(
                FieldSignals(**{**_six(lex, dense).__dict__, "evidence": evidence}),
                docs,
                cfg,
                args=[],
                query_words=set(),
                name_matches=set(),
            )
        ]

    # The same pool: a paraphrase (words the registry lacks) trusts the embedding, an identifier-heavy
    # query the exact match.
    assert ranked(-3.0)[0] == 1
    assert ranked(+3.0)[0] == 0


def _reference_scores(sig, docs, cfg, args, query_words, named, exact, history, weights_fit=None):
    """score_candidates' candidate-at-a-time formula as it was written before it was vectorised:
    the vectorised version must give the same floats, features and order."""
    from toolret.documents.tool_doc import INDEX_FIELDS
    from toolret.scoring.mftr import normalize_field, pool_statistics, query_beta

    weights = cfg.field_weights.as_dict()
    top = max((float(x) for x, p in zip(sig.lexical["description"], sig.present["description"]) if p), default=0.0)
    top /= np.log((sig.n_tools or len(sig.candidates)) + 1.0)
    f = cfg.fusion
    beta = query_beta(f.lexical_weight, f.evidence_slope, sig.evidence, f.strength_slope, top, f.strength_center)
    n = len(sig.candidates)
    combined, weight_sum, zeros = np.zeros(n), np.zeros(n), np.zeros(n)
    shared = pool_statistics(sig, [f for f in INDEX_FIELDS if f in sig.present], cfg)
    per_field, lex_cols, dense_cols, present_cols = {}, [], [], []
    for field in INDEX_FIELDS:
        if field not in sig.present:
            lex_cols.append(zeros), dense_cols.append(zeros), present_cols.append(zeros)
            continue
        present = sig.present[field]
        lex_norm, dense = normalize_field(
            sig.lexical[field], sig.dense[field], present, sig.lexical_bound.get(field, 0.0), cfg, shared
        )
        s_f = np.where(present, beta * lex_norm + (1.0 - beta) * dense, 0.0)
        lex_cols.append(np.where(present, lex_norm, 0.0))
        dense_cols.append(np.where(present, dense, 0.0))
        present_cols.append(present.astype(np.float64))
        per_field[field] = s_f
        combined += weights[field] * s_f
        weight_sum += np.where(present, weights[field], 0.0)
    weight_sum[weight_sum == 0] = 1.0
    raw_cos = np.zeros(n)
    for name in per_field:
        raw_cos = np.maximum(raw_cos, np.where(sig.present[name], sig.dense[name], 0.0))
    base = combined / weight_sum
    # the embedder's anchor: each candidate's description cosine (else its best field's), minus the pool mean
    own = []
    for row in range(n):
        has = [f for f in sig.present if sig.present[f][row]]
        if "description" in has:
            own.append(float(sig.dense["description"][row]))
        else:
            own.append(max([0.0, *(float(sig.dense[f][row]) for f in has)]))
    base = base + cfg.fusion.cosine_weight * (np.array(own) - sum(own) / n)
    learned = np.asarray(weights_fit.coef, dtype=np.float64) if weights_fit is not None else None
    out = []
    for row, index in enumerate(sig.candidates.tolist()):
        penalty = parameter_penalty(docs[index], args, query_words, cfg)
        h = history.get(index, 0.0) if history else 0.0
        heuristic = (
            float(base[row]) + (cfg.fusion.name_match_boost if index in named else 0.0) + cfg.memory.history_weight * h
        )
        heuristic -= penalty
        if index in exact:
            heuristic += cfg.fusion.exact_name_boost + 2.0 * cfg.fusion.cosine_weight
        fields = {f: round(float(s[row]), 6) for f, s in per_field.items() if sig.present[f][row]}
        if h:
            fields["history"] = h
        features = (
            *(float(c[row]) for c in lex_cols),
            *(float(c[row]) for c in dense_cols),
            *(float(c[row]) for c in present_cols),
            penalty / cfg.penalty.scale,
            float(index in named),
            h,
            heuristic,
        )
        score = heuristic if learned is None else float(np.dot(learned, features))
        out.append((index, score, fields, round(penalty, 6), features, float(raw_cos[row])))
    return sorted(out, key=lambda c: (-c[1], c[0]))


@pytest.mark.parametrize("learned", [False, True])
def test_vectorised_scores_equal_the_candidate_at_a_time_formula_exactly(learned):
    from toolret.config import LearnedWeights
    from toolret.scoring.mftr import FEATURE_NAMES
    from toolret.scoring.param_table import ParamTable

    rng = np.random.default_rng(7)
    n_docs = 40
    docs = [
        ToolDoc(
            name=f"tool_{i}",
            description="d",
            parameters=[
                ToolParam(name=name, type=kind, required=bool((i + j) % 2), enum=["Paris", "Rome"] if j == 2 else None)
                for j, (name, kind) in enumerate(
                    [("city", "string"), ("count", "integer"), ("where", "string"), ("user_id", "string")][: i % 5]
                )
            ],
        )
        for i in range(n_docs)
    ]
    cands = np.sort(rng.choice(n_docs, size=25, replace=False))
    names = ("description", "parameters", "response", "examples")
    sig = FieldSignals(
        candidates=cands,
        lexical={f: (rng.random(25) * 5 * (rng.random(25) > 0.3)).astype(np.float32) for f in names},
        lexical_bound={f: 6.0 for f in names},
        dense={f: rng.random(25).astype(np.float32) for f in names},
        present={f: rng.random(25) > (0.2 if f != "examples" else 0.9) for f in names},
        evidence=0.4,
    )
    cfg = _fast()
    fitted = None
    if learned:
        coef = rng.normal(size=len(FEATURE_NAMES)).tolist()
        fitted = LearnedWeights(features=list(FEATURE_NAMES), coef=coef)
    query = "book 2 rooms in Paris for 3 nights"
    args, words = spot_arguments(query), set(query.lower().split())
    named, exact = {int(cands[0]), int(cands[3])}, {int(cands[3])}
    history = {int(cands[5]): 0.7, int(cands[6]): 0.2}
    expected = _reference_scores(sig, docs, cfg, args, words, named, exact, history, fitted)
    for params in (None, ParamTable.build(docs)):
        got = score_candidates(
            sig,
            docs,
            cfg,
            args=args,
            query_words=words,
            name_matches=named,
            exact_matches=exact,
            history=history,
            params=params,
            learned=fitted,
        )
        assert [(c.index, c.score, c.field_scores, c.penalty, c.features, c.cosine) for c in got] == expected
    assert any(row[3] > 0 for row in expected) and any(row[3] == 0 for row in expected)  # penalties vary


@pytest.mark.parametrize("n", [30, 30_000])
def test_a_lexical_z_score_is_bounded_by_the_share_of_the_query_a_tool_matches(n: int) -> None:
    """Whatever the pool's size or sparsity, z <= (BM25 / achievable BM25) / floor, for the ranking's
    floor and for the field evidence's (the unit floor)."""
    from toolret.scoring.mftr import normalize_field

    cfg = _fast()
    rng = np.random.default_rng(0)
    bound = 12.0
    for share_nonzero in (1.0, 0.1, 1.0 / n):  # a dense field, a sparse one, a single match in the pool
        lex = np.where(rng.random(n) < share_nonzero, rng.uniform(0.5, bound, n), 0.0)
        lex[0] = 3.0  # one word of four
        dense = rng.uniform(0.1, 0.5, n)
        for floor in (cfg.fusion.lexical_sd_floor, cfg.fusion.evidence_sd_floor):
            z, _ = normalize_field(lex, dense, np.ones(n, dtype=bool), bound, cfg, lexical_sd_floor=floor)
            assert (z <= lex / bound / floor + 1e-9).all()
        # as evidence, one word of four is worth at most 3.1 sd, never the 10+ a near-empty field gave
        assert z[0] <= 3.2


def test_one_matching_word_in_a_sparse_field_does_not_outvote_a_clear_description_match() -> None:
    """'send Bob an email': the parameter field of reset_password(email) matches one word where no
    other candidate matches anything; send_email's description matches the request clearly."""
    n = 30
    rng = np.random.default_rng(1)
    docs = [ToolDoc(name=f"t{i}", description="x") for i in range(n)]
    dense_desc = rng.uniform(0.15, 0.35, n)
    dense_desc[0], dense_desc[1] = 0.62, 0.40  # 0: send_email, 1: reset_password
    lex_desc = np.where(rng.random(n) < 0.2, rng.uniform(0.5, 2.0, n), 0.0)
    lex_desc[0], lex_desc[1] = 4.0, 0.0
    lex_params = np.zeros(n)
    lex_params[1] = 2.0  # "email", the parameter's name
    sig = _signals(
        n,
        lex_description=lex_desc,
        dense_description=dense_desc,
        lex_parameters=lex_params,
        dense_parameters=rng.uniform(0.1, 0.3, n),
        has_response=[False] * n,
        has_examples=[False] * n,
        bound_description=6.0,
        bound_parameters=6.0,
    )

    def top(**extra):
        cfg = _fast().with_(evidence_slope=0.0, **extra)
        return score_candidates(sig, docs, cfg, args=[], query_words=set(), name_matches=set())[0].index

    assert top() == 0 and top(field_weights={"parameters": 0.5}) == 0
    from toolret.scoring.mftr import normalize_field

    def lone_match_z(floor: float) -> float:
        cfg = _fast().with_(lexical_sd_floor=floor)
        return float(normalize_field(lex_params, np.zeros(n), np.ones(n, dtype=bool), 6.0, cfg)[0][1])

    # One word of three in a field where nothing else matches: 5.4 sd with the ranking's floor, 4.0 as the
    # evidence k="auto" counts on (the unit floor); the ranking above still puts send_email first.
    fusion = RetrievalConfig().fusion
    assert lone_match_z(fusion.lexical_sd_floor) > 5.0 and lone_match_z(fusion.evidence_sd_floor) < 4.1


def test_one_rare_word_in_a_sparse_field_does_not_overturn_a_wide_cosine_gap():
    """The embedder's anchor (cosine_weight): a tool whose description the embedder finds far closer
    keeps first place against a tool that only shares one word with the request in its parameters."""
    n = 20
    docs = [ToolDoc(name=f"t{i}", description="x") for i in range(n)]
    sig = _signals(
        n,
        lex_description=[0.0] * n,
        dense_description=[0.80, 0.42] + [0.40 - 0.01 * i for i in range(n - 2)],
        lex_parameters=[0.0, 3.0] + [0.0] * (n - 2),  # one matching word, where every other tool scores 0
        dense_parameters=[0.2] * n,
        bound_parameters=3.0,
        has_response=[False] * n,
        has_examples=[False] * n,
    )
    fast = _fast().model_copy(update={"penalty": PenaltyConfig(enabled=False)})
    heavy = {"lexical_weight": 0.45, "field_weights": FieldWeights(parameters=0.8)}  # parameters made to count
    no_anchor = fast.model_copy(update={"cosine_weight": 0.0, "strength_slope": 0.0, **heavy})
    anchored = no_anchor.model_copy(update={"cosine_weight": fast.fusion.cosine_weight})

    def first(cfg: RetrievalConfig) -> int:
        return score_candidates(sig, docs, cfg, args=[], query_words=set(), name_matches=set())[0].index

    assert first(no_anchor) == 1  # the z-scores alone: the parameter word wins
    assert first(anchored) == 0  # the wide cosine gap (0.80 vs 0.42) holds


def test_the_lexical_share_follows_the_strength_of_the_best_word_match():
    # logit(beta_q) = logit(beta) + strength_slope x (strength - center): a request that shares two
    # words of full rarity with a tool (strength 2) leans on words, one sharing a common word (0.3) on meaning.
    assert query_beta(0.25, 0.0, 0.0, 3.5, 1.0, 1.0) == pytest.approx(0.25)
    strong, weak = query_beta(0.25, 0.0, 0.0, 3.5, 2.0, 1.0), query_beta(0.25, 0.0, 0.0, 3.5, 0.3, 1.0)
    assert strong == pytest.approx(1 / (1 + np.exp(-(np.log(0.25 / 0.75) + 3.5))))
    assert weak < 0.25 < strong
    assert query_beta(0.25, 0.0, 0.0, 0.0, 2.0, 1.0) == 0.25  # 0 turns it off


def test_the_strength_is_the_best_description_bm25_the_candidates_have():
    # in units of log(N + 1): about how many words of full rarity the best tool shares with the request
    sig = FieldSignals(**{**_signals(3, lex_description=[1.0, 7.5, 3.0]).__dict__, "n_tools": 1000})
    assert lexical_strength(sig) == pytest.approx(7.5 / np.log(1001))
    sig = FieldSignals(
        **{**_signals(2, lex_description=[9.0, 2.0], has_description=[False, True]).__dict__, "n_tools": 9}
    )
    assert lexical_strength(sig) == pytest.approx(2.0 / np.log(10))  # a tool with no description has no score there


def test_a_strong_word_match_outranks_a_closer_meaning_and_a_weak_one_does_not():
    # Tool 0: the request's words (BM25 high), a weaker cosine; tool 1: the better cosine, few shared words.
    cfg = _fast().model_copy(update={"penalty": PenaltyConfig(enabled=False), "fusion": {"evidence_slope": 0.0}})
    docs = [ToolDoc(name="words", description="x"), ToolDoc(name="meaning", description="y")]

    def first(scale: float) -> str:
        lex = [s * scale for s in (1.0, 0.25, 0.0, 0.0, 0.0)]
        sig = _signals(5, lex_description=lex, dense_description=[0.60, 0.66, 0.3, 0.3, 0.3], bound_description=scale)
        sig = FieldSignals(**{**sig.__dict__, "n_tools": 1000})  # strength 14 / log 1001 = 2.0, or 0.29
        ranked = score_candidates(sig, docs + docs[:1] * 3, cfg, args=[], query_words=set(), name_matches=set())
        return ("words", "meaning")[ranked[0].index] if ranked[0].index < 2 else "other"

    assert first(14.0) == "words"  # a registry's-words request: the shared words decide
    assert first(2.0) == "meaning"  # the same pattern at a user's-words strength: the embedder decides


def test_the_strength_shift_is_what_the_strength_term_added():
    # score - anchor - strength_shift is the score the same request gets without the strength term
    # (minus its anchor), candidate by candidate: what k="auto" cuts on (toolret.search.auto_k).
    n = 12
    docs = [ToolDoc(name=f"t{i}", description="x") for i in range(n)]
    sig = _signals(
        n,
        lex_description=[14.0, 9.0, 3.0] + [0.0] * (n - 3),
        dense_description=[0.5, 0.62, 0.58] + [0.3 + 0.01 * i for i in range(n - 3)],
        lex_parameters=[2.0, 0.0, 1.0] + [0.0] * (n - 3),
        dense_parameters=[0.2 + 0.02 * i for i in range(n)],
        bound_description=20.0,
        bound_parameters=4.0,
    )
    on = _fast().model_copy(update={"penalty": PenaltyConfig(enabled=False)})
    off = on.model_copy(update={"strength_slope": 0.0})
    with_term = {c.index: c for c in score_candidates(sig, docs, on, args=[], query_words=set(), name_matches=set())}
    without = {c.index: c for c in score_candidates(sig, docs, off, args=[], query_words=set(), name_matches=set())}
    assert any(abs(c.strength_shift) > 0.1 for c in with_term.values())  # a strong match: the term moved scores
    for i, c in with_term.items():
        assert c.score - c.anchor - c.strength_shift == pytest.approx(without[i].score - without[i].anchor, abs=1e-9)
        assert without[i].strength_shift == 0.0
