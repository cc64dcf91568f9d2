"""The MFTR parameter penalty: how much of what a tool needs the query cannot supply.

P(q, t) = scale * sum_p sigmoid(alpha * (tau - s_p)) * (w_req | w_opt)      (MFTR, eq. 3)

with s_p from :class:`toolret.scoring.arguments.ArgumentFit`. :func:`parameter_penalty` is the
formula for one tool; :func:`candidate_penalties` gives the same numbers for a query's whole
candidate pool from the snapshot's :class:`~toolret.scoring.param_table.ParamTable`, working out each
distinct (name, type, enum) once, all of them together (:mod:`toolret.scoring.param_match`), and
each distinct s_p once, and summing each tool's terms in the tool's parameter order
(``np.bincount`` adds in input order), so both agree to the last bit.
"""

from __future__ import annotations

import math

import numpy as np

from toolret.config import RetrievalConfig
from toolret.documents.tool_doc import ToolDoc
from toolret.scoring.arguments import ArgumentFit, SpottedArgument
from toolret.scoring.param_match import KeyShapes, key_satisfactions
from toolret.scoring.param_table import ParamTable

__all__ = ["candidate_penalties", "parameter_penalty"]


def sigmoid(x: float) -> float:
    """The logistic function, without overflow for large negative ``x``."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def parameter_penalty(
    doc: ToolDoc, args: list[SpottedArgument], query_words: set[str], config: RetrievalConfig
) -> float:
    """P(q, t): how much of what the tool needs the query cannot supply (MFTR, eq. 3).

    Zero when the query carries no argument values: a bare intent ("convert currency")
    says nothing about which tool's parameters it could fill.
    """
    pen = config.penalty
    if not pen.enabled or not args or not doc.parameters:
        return 0.0
    fit = ArgumentFit(args, query_words)
    total = 0.0
    for param in doc.parameters:
        gate = sigmoid(pen.alpha * (pen.tau - fit.satisfaction(param)))
        total += gate * (pen.w_required if param.required else pen.w_optional)
    return pen.scale * total


def candidate_penalties(
    table: ParamTable, candidates: np.ndarray, fit: ArgumentFit, config: RetrievalConfig
) -> np.ndarray:
    """:func:`parameter_penalty` of every candidate (tool indexes into ``table``)."""
    n = len(candidates)
    pen = config.penalty
    if not pen.enabled or not fit.args or n == 0:
        return np.zeros(n, dtype=np.float64)
    owner, row = table.rows(candidates)
    if not len(row):
        return np.zeros(n, dtype=np.float64)
    distinct, which = np.unique(table.key[row], return_inverse=True)
    s_p = key_satisfactions(fit, KeyShapes.of(table), distinct)[which]
    values, back = np.unique(s_p, return_inverse=True)
    gate = np.array([sigmoid(pen.alpha * (pen.tau - v)) for v in values.tolist()], dtype=np.float64)[back]
    terms = gate * np.where(table.required[row], pen.w_required, pen.w_optional)
    totals = np.bincount(owner, weights=terms, minlength=n)
    has_params = np.bincount(owner, minlength=n) > 0
    return np.where(has_params, pen.scale * totals, 0.0)
