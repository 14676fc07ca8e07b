"""Optimally soft labels (Pedersen, thesis ch. 5.3; docs/theory.md section 7): a scikit-learn meta-estimator.

The defender splits its training set in half ``n_splits`` times and trains the base trainer on the given
labels of each half. Every sample is thus left out by exactly ``n_splits`` models; their logits for it,
centred per sample (mean over classes 0), give its leave-out mean ``mu`` and standard deviation ``s``. With
``sigma* = +s`` on the labelled class and ``-s`` on the others, the final model is the base trainer fitted on
the soft targets

    y_target = softmax(mu + alpha * sigma*)                                  (thesis eq. (5.15)).

``alpha = 0`` is the leave-out average (a distillation from models that never saw the sample); larger alpha
moves toward the given label. The whole procedure, inner splits included, is the trainer: an audit that fits
:class:`OptimallySoftLabels` by import path replays all of it for every shadow model, as the thesis requires
("our framework is only valid if we give the LTU attacker the entire procedure").

Randomness: ``random_state`` draws, in this order, the ``n_splits`` permutations, the ``2 n_splits`` inner
seeds, the final fit's seed and the validation seed, so the leave-out statistics do not depend on ``alpha``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from mipkit._random import check_random_state, spawn_seed, spawn_seeds
from mipkit._validation import MipkitValueError, check_interval, check_positive_int
from mipkit.defences._base import (
    FittedBasePredictions,
    leave_out_logits,
    leave_out_statistics,
    optimally_soft_targets,
    resolve_base,
)
from mipkit.defences.alpha_validation import choose_alphas
from mipkit.trainers import fit_many, one_hot
from mipkit.trainers.logistic import _check_X

__all__ = ["ALPHA_MODES", "OptimallySoftLabels"]

ALPHA_MODES = ("validate", "per-sample")


@dataclass
class _Plan:
    permutations: list[np.ndarray]
    inner_seeds: np.ndarray
    final_seed: int
    validation_seed: int


def _check_labels(X: Any, y: Any, owner: str) -> tuple[np.ndarray, np.ndarray]:
    X = _check_X(X, owner)
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise MipkitValueError(
            f"{owner} learns from hard labels y of shape ({X.shape[0]},). Got shape {y.shape} instead."
        )
    return X, y


class OptimallySoftLabels(FittedBasePredictions, ClassifierMixin, BaseEstimator):
    """Train a base classifier on Pedersen's optimally soft labels ``softmax(mu + alpha sigma*)``.

    Parameters
    ----------
    base : str or estimator
        The trainer, able to learn from soft targets: ``"logistic"``
        (:class:`mipkit.trainers.SoftLogisticRegression`), ``"mlp"``
        (:class:`mipkit.trainers.TorchMLPClassifier`, SGD or DP-SGD), an import path of such a class, or an
        instance. Names keep the parameters JSON-able (``mipkit audit --params``).
    base_params : dict, optional
        Constructor parameters of the base trainer (its ``random_state`` is replaced by seeds drawn from this
        estimator's ``random_state``).
    alpha : float >= 0, "validate" or "per-sample"
        A number: the same alpha for every sample. ``"validate"``: the alpha of ``alpha_grid`` with the best
        accuracy on a validation split (ties: the lower validation log-loss, then the smaller alpha).
        ``"per-sample"``: samples are grouped by the quantiles of ``softmax(mu)_y`` (how much the leave-out
        models believe the given label) into ``n_alpha_groups`` groups, and each group's alpha is chosen on
        the validation split (one pass of coordinate search over the groups, from the best global alpha;
        within a group, ties keep the current value).
    n_splits : int >= 2
        Random halvings (the thesis uses 25); each sample is left out by ``n_splits`` models.
    inner_params : dict, optional
        Parameters that differ for the inner fits (the thesis trains them for 12 epochs instead of 6:
        ``{"epochs": 12}``).
    alpha_grid : sequence of float
        Candidates for ``"validate"`` and ``"per-sample"``.
    validation_fraction : float in (0, 1)
        Share of the training set held out to choose alpha. The statistics of the validation fits are
        computed on the rest only; the final model is then fitted on everything.
    n_alpha_groups : int
        Groups of ``"per-sample"``.
    random_state : int, Generator or None
    noise_seed : int or None
        Handed to a DP-SGD base (inner and final fits) whose own ``noise_seed`` is None: reproducible noise,
        not private against anyone who holds it. None: the base's noise comes from OS entropy. An audit
        sets it from each fit's seed.

    Attributes
    ----------
    classes_ : ndarray
    base_ : estimator
        The final model, fitted on the soft targets (columns follow ``classes_``).
    alpha_ : float or None
        The alpha used (None for ``"per-sample"``).
    group_alphas_, group_edges_ : ndarray or None
        ``"per-sample"``: alpha of each group, and the ``softmax(mu)_y`` quantiles that separate the groups.
    validation_scores_ : dict or None
        Validation accuracy of each candidate alpha (``"validate"`` and ``"per-sample"``).
    n_features_in_ : int

    Notes
    -----
    The fitted estimator keeps no per-record arrays (no targets, no leave-out statistics); use
    :func:`mipkit.defences.leave_out_statistics` and :func:`mipkit.defences.optimally_soft_targets` to study
    them. A DP-SGD base's guarantee covers the final fit only for *given* targets; the targets themselves
    depend on the other records, so the procedure as a whole has no DP certificate from it.
    """

    accepts_soft_targets = False

    def __init__(
        self,
        base: Any = "logistic",
        *,
        base_params: dict | None = None,
        alpha: Any = 0.5,
        n_splits: int = 25,
        inner_params: dict | None = None,
        alpha_grid=(0.0, 0.25, 0.5, 1.0, 2.0),
        validation_fraction: float = 0.2,
        n_alpha_groups: int = 3,
        random_state=None,
        noise_seed: int | None = None,
    ):
        self.base = base
        self.base_params = base_params
        self.alpha = alpha
        self.n_splits = n_splits
        self.inner_params = inner_params
        self.alpha_grid = alpha_grid
        self.validation_fraction = validation_fraction
        self.n_alpha_groups = n_alpha_groups
        self.random_state = random_state
        self.noise_seed = noise_seed
        self._check_params()  # bad input fails at construction (so ``mipkit audit`` exits 2 before fitting)

    # ----------------------------------------------------------------------------------------- checks

    @staticmethod
    def _check_alpha(alpha: Any, owner: str) -> Any:
        if isinstance(alpha, str):
            if alpha in ALPHA_MODES:
                return alpha
        elif not isinstance(alpha, bool):
            try:
                value = float(alpha)
            except (TypeError, ValueError):
                value = math.nan
            if math.isfinite(value) and value >= 0:
                return value
        raise MipkitValueError(
            f"The 'alpha' parameter of {owner} must be a number >= 0, 'validate' or 'per-sample'. "
            f"Got {alpha!r} instead."
        )

    def _check_params(self) -> dict:
        owner = type(self).__name__
        alpha = self._check_alpha(self.alpha, owner)
        n_splits = check_positive_int("n_splits", self.n_splits, minimum=2, owner=owner)
        base = resolve_base(self.base, self.base_params, owner, self.noise_seed)
        if self.inner_params is not None and not isinstance(self.inner_params, dict):
            raise MipkitValueError(
                f"The 'inner_params' parameter of {owner} must be a dict. Got {self.inner_params!r} instead."
            )
        inner = clone(base).set_params(**(self.inner_params or {}))
        try:
            grid = sorted({float(a) for a in self.alpha_grid})
        except (TypeError, ValueError):
            grid = [-1.0]
        if not grid or any(not (math.isfinite(a) and a >= 0) for a in grid):
            raise MipkitValueError(
                f"The 'alpha_grid' parameter of {owner} must be a non-empty list of numbers >= 0. "
                f"Got {self.alpha_grid!r} instead."
            )
        fraction = check_interval("validation_fraction", self.validation_fraction, 0.0, 1.0, owner=owner)
        groups = check_positive_int("n_alpha_groups", self.n_alpha_groups, owner=owner)
        return {
            "alpha": alpha,
            "n_splits": n_splits,
            "base": base,
            "inner": inner,
            "grid": grid,
            "fraction": fraction,
            "groups": groups,
        }

    def _plan(self, rng: np.random.Generator, n: int, n_splits: int) -> _Plan:
        permutations = [rng.permutation(n) for _ in range(n_splits)]
        inner_seeds = np.asarray(spawn_seeds(rng, 2 * n_splits))
        return _Plan(permutations, inner_seeds, spawn_seed(rng), spawn_seed(rng))

    # -------------------------------------------------------------------------------------------- fit

    def fit(self, X, y) -> OptimallySoftLabels:
        """Compute the leave-out statistics, the soft targets, and fit the final model; returns self."""
        X, y = _check_labels(X, y, type(self).__name__)
        fitted = self.fit_alphas(X, y, [np.arange(X.shape[0])], [self.random_state], [self.alpha])[0][0]
        self.__dict__.update({k: v for k, v in fitted.__dict__.items() if k.endswith("_")})
        return self

    def leave_out_statistics(self, X, y):
        """The :class:`~mipkit.defences.LeaveOutStatistics` that :meth:`fit` computes on ``(X, y)``.

        Rows follow ``X``; columns follow ``np.unique(y)``. Same ``random_state`` as :meth:`fit` gives the
        same statistics (for analysis: the fitted estimator keeps no per-record arrays).
        """
        checked = self._check_params()
        X, y = _check_labels(X, y, type(self).__name__)
        classes, codes = np.unique(y, return_inverse=True)
        plan = self._plan(check_random_state(self.random_state), X.shape[0], checked["n_splits"])
        logits = leave_out_logits(
            checked["inner"],
            X,
            one_hot(codes, classes.size),
            [np.arange(X.shape[0])],
            [plan.permutations],
            [plan.inner_seeds],
        )
        return leave_out_statistics(logits[0])

    def _fit_many(self, X, y, subsets, seeds) -> list:
        """:func:`mipkit.trainers.fit_many` for this defence: every inner fit of every model in one batch."""
        return self.fit_alphas(X, y, subsets, seeds, [self.alpha])[0]

    def fit_alphas(self, X, y, subsets, seeds, alphas) -> list[list]:
        """Fit the defence on several training sets and for several alphas, sharing the inner fits.

        Model ``[a][m]`` equals ``clone(self).set_params(alpha=alphas[a], random_state=seeds[m])`` fitted on
        ``X[subsets[m]], y[subsets[m]]`` (the leave-out statistics do not depend on alpha, so they are
        computed once per training set; all inner fits of all models go through one
        :func:`mipkit.trainers.fit_many` call, vectorised where the base trainer allows).

        Returns
        -------
        list (one per alpha) of lists (one per subset) of fitted :class:`OptimallySoftLabels`.
        """
        owner = type(self).__name__
        checked = self._check_params()
        alphas = [self._check_alpha(a, owner) for a in alphas]
        X, y = _check_labels(X, y, owner)
        subsets = [np.asarray(s, dtype=np.int64) for s in subsets]
        out: list[list] = [[None] * len(subsets) for _ in alphas]
        groups: dict[tuple, list[int]] = {}
        for m, rows in enumerate(subsets):
            groups.setdefault(tuple(np.unique(y[rows]).tolist()), []).append(m)
        for members in groups.values():
            classes = np.unique(y[subsets[members[0]]])
            if classes.size < 2:
                raise MipkitValueError(f"{owner} needs at least two classes in its training set.")
            fits = self._fit_group(
                X, y, classes, [subsets[m] for m in members], [seeds[m] for m in members], alphas, checked
            )
            for a in range(len(alphas)):
                for j, m in enumerate(members):
                    out[a][m] = fits[a][j]
        return out

    def _fit_group(self, X, y, classes, subsets, seeds, alphas, checked) -> list[list]:
        owner = type(self).__name__
        C = classes.size
        n_splits = checked["n_splits"]
        known = np.isin(y, classes)
        codes_all = np.where(known, np.searchsorted(classes, y), 0)
        Y = np.where(known[:, None], one_hot(codes_all, C), 1.0 / C)
        for rows in subsets:
            if rows.size < 4:
                raise MipkitValueError(f"{owner} needs at least 4 training samples. Got {rows.size}.")
        plans = [
            self._plan(check_random_state(s), rows.size, n_splits)
            for s, rows in zip(seeds, subsets, strict=True)
        ]
        logits = leave_out_logits(
            checked["inner"], X, Y, subsets, [p.permutations for p in plans], [p.inner_seeds for p in plans]
        )
        stats = [leave_out_statistics(z) for z in logits]
        codes = [codes_all[rows] for rows in subsets]
        chosen: dict[str, list] = {}
        if any(isinstance(a, str) for a in alphas):
            chosen = self._validate(X, Y, codes, subsets, plans, checked, per_sample="per-sample" in alphas)
        out = []
        for alpha in alphas:
            per_model = np.repeat(Y[None], len(subsets), axis=0)
            for m, rows in enumerate(subsets):
                a = alpha if not isinstance(alpha, str) else chosen[alpha][m]["alpha_vector"](stats[m])
                per_model[m, rows] = optimally_soft_targets(stats[m], codes[m], a)
            finals = fit_many(checked["base"], X, per_model, subsets, [p.final_seed for p in plans])
            models = []
            for m, final in enumerate(finals):
                est = clone(self).set_params(alpha=alpha, random_state=seeds[m])
                est.classes_ = classes
                est.base_ = final
                est.n_features_in_ = int(X.shape[1])
                info = chosen.get(alpha, [{}] * len(subsets))[m] if isinstance(alpha, str) else {}
                est.alpha_ = None if alpha == "per-sample" else float(info.get("alpha", alpha))
                est.group_alphas_ = info.get("group_alphas")
                est.group_edges_ = info.get("group_edges")
                est.validation_scores_ = info.get("scores")
                models.append(est)
            out.append(models)
        return out

    def _validate(self, X, Y, codes, subsets, plans, checked, *, per_sample: bool) -> dict:
        """Choose alpha (and per-group alphas) on a validation split of each training set."""
        return choose_alphas(
            X,
            Y,
            codes,
            subsets,
            plans,
            checked,
            per_sample=per_sample,
            plan=self._plan,
            owner=type(self).__name__,
        )

    # ---------------------------------------------------------------------------------------- predict
