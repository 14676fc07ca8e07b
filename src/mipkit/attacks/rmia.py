"""The Robust Membership Inference Attack (RMIA) of Zarifzadeh et al. 2024, in O(N + M) memory.

Zarifzadeh, Liu, Shokri, "Low-Cost High-Power Membership Inference Attacks" (ICML 2024), Sec. 3, eq. (2)-(5)
and Algorithm 1. For a target record ``x`` and population records ``z`` (known non-members),

    LR(x, z) = (p(x | theta) / p(x)) / (p(z | theta) / p(z)),     score(x) = Pr_z[ LR(x, z) > gamma ],

where ``p(. | theta)`` is the target model's probability of the true label and ``p(.)`` its average over
reference models:

- **online**: ``p(x)`` is the mean over all ``K`` reference models (IN and OUT for ``x``);
- **offline** (Sec. 4 / App. B.2.2, "offline RMIA"): only OUT models are available, and
  ``p(x) = ((1 + a) P_OUT(x) + (1 - a)) / 2`` with ``P_OUT(x)`` the mean of the OUT models' probabilities;
  ``a`` linearly approximates how much an IN model would raise the probability, tuned with
  :func:`tune_rmia_a`.

Population records are OUT for every reference model, so ``p(z)`` is the mean over all ``K`` models (and, in
the offline attack, goes through the same ``a``-map, as in the authors' code).

**Memory.** Forming the ``N x M`` matrix of ``LR(x, z)`` (as ML Privacy Meter does) needs 20 GB for
50,000 x 50,000 float64 values. For one target model the score is monotone in ``r(x) = p(x|theta)/p(x)``:
``LR(x, z) > gamma`` iff ``r(x) / r(z) > gamma``, and in floating point ``r(x) / r(z)`` is non-increasing in
``r(z)`` (correctly rounded division is monotone), so the set of ``z`` that count is a prefix of the
population sorted by ``r(z)``. mipkit sorts the ``M`` population ratios once, brackets each prefix length
with ``np.searchsorted`` at ``r(x) / gamma`` (widened by a few ulps), and settles the bracket by a
vectorised binary search on the *same* predicate ``r(x) / r(z) > gamma``, so the result is bit-identical to
the brute-force definition (ties included) in ``O((N + M) log M)`` time and ``O(N + M)`` memory beyond the
inputs.

Probabilities are clipped below at the smallest normal float (``TINY``) before dividing, so every ratio is
positive and finite and the comparison is defined.
"""

from __future__ import annotations

import numpy as np

from mipkit._random import check_random_state
from mipkit._validation import (
    MipkitValueError,
    check_finite_array,
    check_interval,
    check_positive,
    check_positive_int,
)

__all__ = ["rmia_from_ratios", "rmia_reference_probability", "rmia_scores", "tune_rmia_a"]

TINY = np.finfo(float).tiny


def _check_probabilities(name: str, values, ndim: int, owner: str) -> np.ndarray:
    arr = check_finite_array(name, values, ndim=ndim, owner=owner)
    if np.any(arr < 0) or np.any(arr > 1 + 1e-9):
        raise MipkitValueError(f"The {name!r} parameter of {owner} must hold probabilities in [0, 1].")
    return arr


def _mean_rows(ref_p: np.ndarray, keep: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Mean over the reference models (axis 0) of ``ref_p`` where ``keep`` (all models if None), row by row
    so that no ``(K, n)`` temporary is made. Returns ``(mean, count)``; mean is NaN where count is 0."""
    total = np.zeros(ref_p.shape[1])
    if keep is None:
        for row in ref_p:
            total += row
        return total / ref_p.shape[0], np.full(ref_p.shape[1], ref_p.shape[0])
    count = np.zeros(ref_p.shape[1], dtype=np.int64)
    for row, take in zip(ref_p, keep, strict=True):
        total += np.where(take, row, 0.0)
        count += take
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / count, count


def rmia_reference_probability(
    ref_p, ref_in=None, *, a: float = 0.3, online: bool = False, owner: str = "rmia_reference_probability"
) -> np.ndarray:
    """``p(x)``: the reference models' average probability of each record (Zarifzadeh et al. eq. (3)).

    Online: the mean over all K models. Offline: ``((1 + a) P_OUT(x) + (1 - a)) / 2`` with ``P_OUT(x)`` the
    mean over the models with ``ref_in[k, i] = False`` (all models when ``ref_in`` is None, as for
    population records). A record with no OUT model falls back to the mean over all models (documented
    approximation: it overstates ``p(x)`` and so understates that record's score).

    Parameters
    ----------
    ref_p : array of shape (K, n)
        Reference models' probability of the true label.
    ref_in : bool array of shape (K, n), optional
    a : float in [0, 1]
    online : bool
    """
    ref = _check_probabilities("ref_p", ref_p, 2, owner)
    if online:
        return _mean_rows(ref, None)[0]
    a = check_interval("a", a, 0.0, 1.0, closed="both", owner=owner)
    if ref_in is None:
        p_out = _mean_rows(ref, None)[0]
    else:
        member = np.asarray(ref_in, dtype=bool)
        if member.shape != ref.shape:
            raise MipkitValueError(
                f"ref_in must have the shape of ref_p {ref.shape} in {owner}. Got {member.shape} instead."
            )
        p_out, count = _mean_rows(ref, ~member)
        if np.any(count == 0):
            p_out = np.where(count > 0, p_out, _mean_rows(ref, None)[0])
    return ((1 + a) * p_out + (1 - a)) / 2


def rmia_from_ratios(target_ratio, population_ratio, *, gamma: float = 1.0) -> np.ndarray:
    """``score(x) = (1/M) #{z : r(x) / r(z) > gamma}`` for every target, without the N x M matrix.

    Sorts the population ratios once; for each target the ``z`` that count form a prefix of the sorted
    population (the predicate is monotone in ``r(z)``), located with ``np.searchsorted`` and then checked
    and settled by a vectorised binary search on the exact predicate. Equal to
    ``np.mean(r_x[:, None] / r_z[None, :] > gamma, axis=1)`` bit for bit.

    Parameters
    ----------
    target_ratio : array of shape (N,), positive
        ``r(x) = p(x | theta) / p(x)``.
    population_ratio : array of shape (M,), positive
        ``r(z) = p(z | theta) / p(z)``.
    gamma : float > 0

    Returns
    -------
    ndarray of shape (N,), values in {0, 1/M, ..., 1}.
    """
    r_x = check_finite_array("target_ratio", target_ratio, ndim=1, owner="rmia_from_ratios")
    r_z = check_finite_array("population_ratio", population_ratio, ndim=1, owner="rmia_from_ratios")
    gamma = check_positive("gamma", gamma, owner="rmia_from_ratios")
    if np.any(r_x <= 0) or np.any(r_z <= 0):
        raise MipkitValueError("RMIA likelihood ratios must be positive.")
    sorted_z = np.sort(r_z)
    m = sorted_z.shape[0]
    # Bracket each answer with np.searchsorted on r(x)/gamma widened by a few ulps (the float predicate can
    # differ from the real one only within rounding error of the boundary), then check the bracket on the
    # exact predicate and fall back to the full range where it fails (overflow, subnormal gamma).
    with np.errstate(over="ignore", under="ignore"):
        bound = r_x / gamma
        lo = np.searchsorted(sorted_z, bound * (1 - 8 * np.finfo(float).eps), side="left").astype(np.int64)
        hi = np.searchsorted(sorted_z, bound * (1 + 8 * np.finfo(float).eps), side="right").astype(np.int64)
        below_ok = (lo == 0) | (r_x / sorted_z[np.maximum(lo - 1, 0)] > gamma)
        above_ok = (hi == m) | ~(r_x / sorted_z[np.minimum(hi, m - 1)] > gamma)
    bad = ~(below_ok & above_ok)
    lo[bad], hi[bad] = 0, m
    # Binary search inside [lo, hi] keeping: predicate true on sorted_z[:lo], false on sorted_z[hi:].
    active = np.flatnonzero(lo < hi)
    while active.size:
        mid = (lo[active] + hi[active]) // 2
        with np.errstate(over="ignore", under="ignore"):
            true_at_mid = r_x[active] / sorted_z[mid] > gamma
        lo[active] = np.where(true_at_mid, mid + 1, lo[active])
        hi[active] = np.where(true_at_mid, hi[active], mid)
        active = active[lo[active] < hi[active]]
    return lo / m


def rmia_scores(
    target_p,
    ref_p,
    ref_in,
    pop_target_p,
    pop_ref_p,
    *,
    a: float = 0.3,
    gamma: float = 1.0,
    online: bool = False,
) -> np.ndarray:
    """RMIA membership scores ``Pr_z[(p(x|theta)/p(x)) / (p(z|theta)/p(z)) > gamma]`` (Zarifzadeh et al.).

    Parameters
    ----------
    target_p : array of shape (n,)
        Target model's probability of the true label of each target record.
    ref_p : array of shape (K, n)
        Reference models' probability of the true label of each target record.
    ref_in : bool array of shape (K, n)
        ``ref_in[k, i]`` is True iff target record ``i`` was in reference model ``k``'s training set.
    pop_target_p : array of shape (m,)
        Target model's probability of the true label of each population record (non-members of all).
    pop_ref_p : array of shape (K, m)
        Reference models' probabilities on the population records.
    a : float in [0, 1]
        Offline approximation parameter (ignored when ``online``); tune it with :func:`tune_rmia_a`.
    gamma : float > 0
        Threshold on the pairwise likelihood ratio (the paper uses ``gamma >= 1``; 1 by default).
    online : bool
        Online (``p(x)`` = mean over all reference models) or offline (OUT models and ``a``).

    Returns
    -------
    ndarray of shape (n,)
        Fraction of population records ``x`` dominates; higher = more likely a member.

    Notes
    -----
    Memory beyond the inputs is ``O(n + m)``: means are accumulated row by row and the score is computed
    by :func:`rmia_from_ratios`.
    """
    owner = "rmia_scores"
    p_theta_x = _check_probabilities("target_p", target_p, 1, owner)
    ref = _check_probabilities("ref_p", ref_p, 2, owner)
    p_theta_z = _check_probabilities("pop_target_p", pop_target_p, 1, owner)
    pop_ref = _check_probabilities("pop_ref_p", pop_ref_p, 2, owner)
    member = np.asarray(ref_in, dtype=bool)
    if ref.shape != (ref.shape[0], p_theta_x.shape[0]) or member.shape != ref.shape:
        raise MipkitValueError(
            f"rmia_scores needs target_p (n,), ref_p and ref_in (K, n). Got {p_theta_x.shape}, "
            f"{ref.shape} and {member.shape} instead."
        )
    if pop_ref.shape != (ref.shape[0], p_theta_z.shape[0]):
        raise MipkitValueError(
            f"rmia_scores needs pop_target_p (m,) and pop_ref_p (K, m) with the K of ref_p = {ref.shape[0]}. "
            f"Got {p_theta_z.shape} and {pop_ref.shape} instead."
        )
    p_x = rmia_reference_probability(ref, member, a=a, online=online, owner=owner)
    p_z = rmia_reference_probability(pop_ref, None, a=a, online=online, owner=owner)
    r_x = np.maximum(p_theta_x, TINY) / np.maximum(p_x, TINY)
    r_z = np.maximum(p_theta_z, TINY) / np.maximum(p_z, TINY)
    return rmia_from_ratios(r_x, r_z, gamma=gamma)


def tune_rmia_a(
    ref_p,
    ref_in,
    pop_ref_p,
    *,
    grid=None,
    gamma: float = 1.0,
    n_targets: int = 1,
    random_state=None,
) -> float:
    """Choose the offline parameter ``a`` as the RMIA authors do: attack a reference model.

    One reference model plays the target and the others the (offline) references; for each ``a`` in
    ``grid`` the offline attack's AUC on the records (labels ``ref_in[target]``; the Mann-Whitney
    statistic, ties counted one half, by ``sklearn.metrics.roc_auc_score``) is computed, and the ``a``
    with the highest AUC (averaged over ``n_targets`` reference models picked at random) is returned; ties
    go to the smallest ``a``. Zarifzadeh et al. (Sec. 4, App. B.2.2) pick ``a`` this way, and ML Privacy Meter
    scans a grid on [0, 1].

    Parameters
    ----------
    ref_p : array of shape (K, n), K >= 2
    ref_in : bool array of shape (K, n)
    pop_ref_p : array of shape (K, m)
    grid : array of floats in [0, 1], default ``0, 0.05, ..., 1``
    gamma : float > 0
    n_targets : int
        How many reference models to use in turn as the simulated target.
    random_state : int, Generator or None
        Picks the simulated targets.

    Returns
    -------
    float
    """
    owner = "tune_rmia_a"
    ref = _check_probabilities("ref_p", ref_p, 2, owner)
    member = np.asarray(ref_in, dtype=bool)
    pop_ref = _check_probabilities("pop_ref_p", pop_ref_p, 2, owner)
    k = ref.shape[0]
    if k < 2:
        raise MipkitValueError("tune_rmia_a needs at least two reference models (one plays the target).")
    if member.shape != ref.shape or pop_ref.shape[0] != k:
        raise MipkitValueError(
            f"tune_rmia_a needs ref_p, ref_in (K, n) and pop_ref_p (K, m). Got {ref.shape}, {member.shape} "
            f"and {pop_ref.shape} instead."
        )
    n_targets = min(check_positive_int("n_targets", n_targets, owner=owner), k)
    values = np.linspace(0.0, 1.0, 21) if grid is None else np.asarray(grid, dtype=float).ravel()
    for value in values:
        check_interval("a", value, 0.0, 1.0, closed="both", owner=owner)
    usable = [t for t in range(k) if 0 < member[t].sum() < member.shape[1]]
    if not usable:
        raise MipkitValueError("tune_rmia_a needs a reference model with both IN and OUT records.")
    # The tuning objective is part of the attack (the authors pick ``a`` by the AUC of the simulated game), so
    # it is computed here with scikit-learn's AUC rather than through mipkit's metrics layer, which attacks do
    # not import (measuring stays apart from attacking).
    from sklearn.metrics import roc_auc_score

    rng = check_random_state(random_state)
    targets = rng.choice(usable, size=min(n_targets, len(usable)), replace=False)
    aucs = np.zeros(values.shape[0])
    for t in targets:
        others = np.arange(k) != t
        for j, value in enumerate(values):
            scores = rmia_scores(
                ref[t], ref[others], member[others], pop_ref[t], pop_ref[others], a=value, gamma=gamma
            )
            aucs[j] += roc_auc_score(member[t].astype(int), scores)
    return float(values[int(np.argmax(aucs))])
