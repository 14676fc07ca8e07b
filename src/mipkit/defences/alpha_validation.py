"""How :class:`~mipkit.defences.OptimallySoftLabels` chooses alpha on a validation split of each training
set: one alpha from the grid (``alpha="validate"``), then, for ``"per-sample"``, one alpha per group of
samples (groups by the leave-out probability of the given label), group by group (docs/theory.md section 7).

Each training set is split once (the model's validation seed): the leave-out statistics of the other part
give candidate soft targets, a model is fitted per candidate, and the candidate with the best validation
accuracy wins (ties: the smaller log loss, then the first in the grid; a group keeps its current alpha on a
tie).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mipkit._random import spawn_seed
from mipkit._validation import MipkitValueError
from mipkit.defences._base import leave_out_logits, leave_out_statistics, optimally_soft_targets
from mipkit.trainers import fit_many

__all__ = ["choose_alphas"]


def choose_alphas(
    X: np.ndarray,
    Y: np.ndarray,
    codes: list[np.ndarray],
    subsets: list[np.ndarray],
    plans: Sequence[Any],
    checked: dict,
    *,
    per_sample: bool,
    plan: Callable[[np.random.Generator, int, int], Any],
    owner: str,
) -> dict:
    """``{"validate": [...], "per-sample": [...]}``: per model, the chosen alpha(s), their validation scores
    and ``alpha_vector(stats)``, the alphas of the final fit's soft targets (``"per-sample"`` only with
    ``per_sample``). ``plan(rng, n, n_splits)`` draws the inner splits of a validation training part."""
    parts, tr_plans, grid_seeds = _split(subsets, plans, checked, plan, owner)
    tr_rows = [subsets[m][tr] for m, (_, tr) in enumerate(parts)]
    logits = leave_out_logits(
        checked["inner"],
        X,
        Y,
        tr_rows,
        [p.permutations for p in tr_plans],
        [p.inner_seeds for p in tr_plans],
    )
    stats_tr = [leave_out_statistics(z) for z in logits]
    score = _Scorer(checked["base"], X, Y, codes, subsets, parts, stats_tr, grid_seeds)
    grid = checked["grid"]
    results = score([[np.full(tr.size, a) for a in grid] for _, tr in parts])
    chosen: dict[str, list] = {"validate": [], "per-sample": []}
    for res in results:
        best = max(range(len(grid)), key=lambda i, r=res: (r[i], -i))
        scores = {f"{a:g}": res[i][0] for i, a in enumerate(grid)}
        chosen["validate"].append(
            {"alpha": grid[best], "scores": scores, "alpha_vector": lambda s, v=grid[best]: v}
        )
    if per_sample:
        chosen["per-sample"] = _per_group(score, stats_tr, codes, parts, grid, checked["groups"], chosen)
    return chosen


def _split(
    subsets: list[np.ndarray], plans: Sequence[Any], checked: dict, plan: Callable, owner: str
) -> tuple[list[tuple[np.ndarray, np.ndarray]], list[Any], list[int]]:
    """Per model: its (validation, training) positions, the inner splits of the training part and the seed
    of the fits on it, all from the model's validation seed."""
    parts, tr_plans, grid_seeds = [], [], []
    for m, rows in enumerate(subsets):
        rng = np.random.default_rng(plans[m].validation_seed)
        order = rng.permutation(rows.size)
        n_val = max(1, int(round(checked["fraction"] * rows.size)))
        val, tr = np.sort(order[:n_val]), np.sort(order[n_val:])
        if tr.size < 4:
            raise MipkitValueError(
                f"{owner} needs at least 4 samples outside the validation split. Got {tr.size}."
            )
        parts.append((val, tr))
        tr_plans.append(plan(rng, tr.size, checked["n_splits"]))
        grid_seeds.append(spawn_seed(rng))
    return parts, tr_plans, grid_seeds


class _Scorer:
    """``scorer(alpha_vectors)``: (accuracy, -log loss) on the validation split of every candidate of every
    model (``alpha_vectors[m]``: model ``m``'s candidates, one alpha per training-part sample)."""

    def __init__(self, base, X, Y, codes, subsets, parts, stats_tr, grid_seeds) -> None:
        self.base, self.X, self.Y, self.codes, self.subsets = base, X, Y, codes, subsets
        self.parts, self.stats_tr, self.grid_seeds = parts, stats_tr, grid_seeds
        self.tr_rows = [subsets[m][tr] for m, (_, tr) in enumerate(parts)]

    def __call__(self, alpha_vectors: list[list[np.ndarray]]) -> list[list[tuple[float, float]]]:
        X, codes, parts = self.X, self.codes, self.parts
        jobs, per_model = [], []
        for m, candidates in enumerate(alpha_vectors):
            for a in candidates:
                T = self.Y.copy()
                T[self.tr_rows[m]] = optimally_soft_targets(self.stats_tr[m], codes[m][parts[m][1]], a)
                per_model.append(T)
                jobs.append(m)
        models = fit_many(
            self.base,
            X,
            np.stack(per_model),
            [self.tr_rows[m] for m in jobs],
            [self.grid_seeds[m] for m in jobs],
        )
        out: list[list] = [[] for _ in alpha_vectors]
        for m, model in zip(jobs, models, strict=True):
            val_rows = self.subsets[m][parts[m][0]]
            proba = np.asarray(model.predict_proba(X[val_rows]))
            truth = codes[m][parts[m][0]]
            acc = float(np.mean(np.argmax(proba, axis=1) == truth))
            nll = float(-np.mean(np.log(np.clip(proba[np.arange(truth.size), truth], 1e-300, None))))
            out[m].append((acc, -nll))
        return out


def _per_group(
    score: _Scorer,
    stats_tr: list[Any],
    codes: list[np.ndarray],
    parts: list[tuple[np.ndarray, np.ndarray]],
    grid: list[float],
    G: int,
    chosen: dict[str, list],
) -> list[dict]:
    """Per model: one alpha per group of samples (``G`` quantile groups of the leave-out probability of the
    given label), chosen group by group from the global alpha of ``chosen["validate"]``."""
    n_models = len(parts)
    edges, group_tr, current = [], [], []
    for m in range(n_models):
        p = stats_tr[m].label_probability(codes[m][parts[m][1]])
        e = np.quantile(p, np.arange(1, G) / G) if G > 1 else np.array([])
        edges.append(e)
        group_tr.append(np.searchsorted(e, p, side="right"))
        current.append(np.full(G, chosen["validate"][m]["alpha"]))
    group_scores: list[dict] = [{} for _ in range(n_models)]
    for g in range(G):
        candidates = []
        for m in range(n_models):
            row = []
            for a in grid:
                trial = current[m].copy()
                trial[g] = a
                row.append(trial[group_tr[m]])
            candidates.append(row)
        res = score(candidates)
        for m in range(n_models):
            keep = grid.index(current[m][g])
            best = max(range(len(grid)), key=lambda i, r=res[m], k=keep: (r[i], i == k, -i))
            current[m][g] = grid[best]
            group_scores[m][f"group {g}"] = {f"{a:g}": res[m][i][0] for i, a in enumerate(grid)}
    out = []
    for m in range(n_models):
        alphas_m, edges_m = current[m].copy(), edges[m]

        def vector(stats, a=alphas_m, e=edges_m, c=codes[m]):
            return a[np.searchsorted(e, stats.label_probability(c), side="right")]

        out.append(
            {
                "alpha": None,
                "group_alphas": alphas_m,
                "group_edges": edges_m,
                "alpha_vector": vector,
                "scores": {"global": chosen["validate"][m]["scores"], **group_scores[m]},
            }
        )
    return out
