"""Membership-inference metrics per subgroup of records (slices), with cluster-bootstrap intervals.

An audit's trials are (target model, record) pairs. For a subgroup ``G`` of the records (say ``Gender = F``,
or one true class), :func:`slice_summary` restricts the trials to the records of ``G`` and computes there the
metrics the audit reports for all records (ML Privacy Meter and TensorFlow Privacy slice results the same
way):

* the ROC AUC of the attack's scores on the subgroup's trials;
* TPR at each FPR: the lowest threshold whose FPR *on the subgroup's non-member trials* is at most the target,
  and the fraction of its member trials at or above it (Carlini et al. 2022);
* eta = accuracy - 1/2 of the attack's hard guesses on the subgroup's trials (Izzo et al., Def. 1;
  docs/theory.md section 1). The guesses are the audit's own (a threshold cross-fitted across target models
  on all trials, :func:`mipkit.metrics.attack_summary.crossfit_guesses`), so eta over all records is the
  trial-weighted mean of the subgroups' etas.

Intervals: the two-way cluster bootstrap of the audit's headline (docs/theory.md section 11): target models
and records are resampled with replacement (:func:`mipkit.stats.pigeonhole_weights`, Owen 2007) and every
statistic is recomputed on the resampled trials, a subgroup's from its own records only (domain estimation:
one set of replicates serves all subgroups and the whole pool, so they are bootstrapped jointly). Each
reported ``*_ci`` is the marginal studentised interval (:func:`mipkit.stats.simultaneous_intervals` with one
statistic), clipped to the metric's range.

Which subgroups are *more exposed*: a subgroup is flagged when the interval of its excess over all records,
``eta_G - eta_all`` or ``AUC_G - AUC_all``, lies wholly above 0, the intervals being simultaneous over every
subgroup reported and both metrics (max-|t| critical value on the joint replicates of the differences). So
across all subgroups and both metrics, the chance that any subgroup is flagged when none is more exposed is
about ``1 - confidence``. A subgroup with fewer than ``min_trials`` member or non-member trials, or fewer than
``min_records`` records, gets no numbers ("too few records").
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from mipkit._random import check_random_state
from mipkit._validation import MipkitValueError, check_interval
from mipkit.metrics.attack_summary import crossfit_guesses, fpr_label, threshold_at_fpr
from mipkit.metrics.cluster_bootstrap import weighted_auc_replicates
from mipkit.metrics.roc import DEFAULT_FPRS, roc_auc
from mipkit.stats import pigeonhole_weights, simultaneous_intervals, two_way_ratio_replicates

__all__ = [
    "MAX_LEVELS",
    "METHOD",
    "MIN_RECORDS",
    "MIN_TRIALS",
    "RULE",
    "SliceSummary",
    "group_labels",
    "slice_summary",
]

MIN_TRIALS = 20
"""A subgroup needs at least this many member trials and this many non-member trials to get numbers."""
MIN_RECORDS = 10
"""... and at least this many records (the bootstrap resamples records)."""
MAX_LEVELS = 10
"""A numeric column with more distinct values than this is cut into quantile bins."""
N_BINS = 4
ALL = "(all records)"
MISSING = "(missing)"
RARE = "(rarer values)"
METHOD = (
    "two-way cluster bootstrap over target models and records restricted to each subgroup's records "
    "(pigeonhole bootstrap, Owen 2007; docs/theory.md section 11); marginal studentised intervals"
)
RULE = (
    "more exposed: the subgroup's own eta interval lies above 0 (a measured leak, not only a difference from "
    "the others) and the interval of its excess over all records (eta or AUC), simultaneous over the "
    "subgroups and both metrics, lies above 0"
)


def group_labels(
    values: Any, *, max_levels: int = MAX_LEVELS, n_bins: int = N_BINS, min_count: int = MIN_RECORDS
) -> tuple[np.ndarray, list[str], str | None]:
    """Subgroup of each record: ``(codes, levels, binning)``; ``levels[codes[i]]`` is record ``i``'s subgroup.

    A value is its own subgroup (as text; missing values form ``"(missing)"``), except in a column of numbers
    (not text that looks like numbers) with more than ``max_levels`` distinct values, which is cut at its
    ``n_bins``-quantiles into bins ``"< b"``, ``"[a, b)"``, ..., ``">= a"``; ``binning`` then says so (else
    None). Levels are in sorted order. No label discloses a record's value: the outer bins do not name the
    column's minimum and maximum, and the values held by fewer than ``min_count`` records are pooled into
    one subgroup ``"(rarer values)"`` (last, before ``"(missing)"``).
    """
    s = pd.Series(values.to_numpy() if isinstance(values, pd.Series) else np.asarray(values))
    if s.dtype == object:  # a column of numbers with missing cells read as objects
        as_num = pd.to_numeric(s, errors="coerce")
        if as_num.notna().sum() == s.notna().sum() and not s.map(lambda v: isinstance(v, (bool, str))).any():
            s = as_num
    missing = s.isna().to_numpy()
    numeric = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s) and (~missing).any()
    codes = np.full(s.size, -1, dtype=int)
    binning = None
    if numeric:
        x = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
        uniq = np.unique(x[~missing])
        if uniq.size > max_levels:
            edges = np.unique(np.quantile(x[~missing], np.linspace(0.0, 1.0, n_bins + 1)))
            k = edges.size - 1
            levels = [_bin_label(edges, j) for j in range(k)]
            codes[~missing] = np.clip(np.searchsorted(edges[1:-1], x[~missing], side="right"), 0, k - 1)
            binning = f"{k} quantile bins (the column has {uniq.size} distinct values)"
        else:
            levels = [f"{v:g}" for v in uniq]
            codes[~missing] = np.searchsorted(uniq, x[~missing])
    else:
        text = s[~missing].astype(str).to_numpy()
        uniq = np.unique(text) if text.size else np.array([], dtype=object)
        levels = [str(v) for v in uniq]
        codes[~missing] = np.searchsorted(uniq, text)
    if binning is None and min_count > 1 and levels:
        counts = np.bincount(codes[~missing], minlength=len(levels))
        rare = counts < min_count
        if rare.any():
            kept = [lev for lev, r in zip(levels, rare, strict=True) if not r]
            remap = np.full(len(levels), len(kept))
            remap[~rare] = np.arange(len(kept))
            codes[~missing] = remap[codes[~missing]]
            levels = [*kept, RARE]
    if missing.any():
        codes[missing] = len(levels)
        levels = [*levels, MISSING]
    return codes, levels, binning


def _bin_label(edges: np.ndarray, j: int) -> str:
    """Bin ``j`` of the quantile ``edges``, without the outer edges (the real minimum and maximum)."""
    k = edges.size - 1
    if k == 1:
        return "(all values)"
    if j == 0:
        return f"< {edges[1]:.4g}"
    if j == k - 1:
        return f">= {edges[j]:.4g}"
    return f"[{edges[j]:.4g}, {edges[j + 1]:.4g})"


def _interval(est: float, rep: np.ndarray, confidence: float, lo: float, hi: float) -> list[float]:
    low, high, _ = simultaneous_intervals(np.array([est]), rep.reshape(-1, 1), confidence)
    return [float(np.clip(low[0], lo, hi)), float(np.clip(high[0], lo, hi))]


@dataclass(frozen=True)
class SliceSummary:
    """Per-subgroup metrics of one attack (:func:`slice_summary`).

    Attributes
    ----------
    overall : dict
        The row of all records (same keys as a subgroup's).
    rows : list of dict
        One per subgroup: ``column``, ``group``, ``is_feature``, ``n_records``, ``member_trials``,
        ``nonmember_trials``, ``auc`` / ``auc_ci``, ``tpr_at_fpr`` / ``tpr_at_fpr_ci`` (keyed by FPR),
        ``eta`` / ``eta_ci``, ``eta_excess_ci`` / ``auc_excess_ci`` (simultaneous intervals of the excess over
        all records), ``more_exposed`` (bool; None without numbers), ``more_exposed_by`` and ``note``
        ("too few records ..." when the numbers are withheld).
    columns : dict
        Per slicing column: ``is_feature`` (whether the models saw it; None when unknown), ``kind`` and
        ``binning`` (how a many-valued numeric column was cut), ``n_groups``.
    attack : str or None
    confidence, n_boot, min_trials, min_records
    method, rule : str
        How the intervals were computed and what flags a subgroup.
    """

    overall: dict
    rows: list[dict]
    columns: dict[str, dict]
    attack: str | None
    confidence: float
    n_boot: int
    min_trials: int
    min_records: int
    method: str = METHOD
    rule: str = RULE
    critical_value: float | None = field(default=None)

    @property
    def most_exposed(self) -> list[dict]:
        """The flagged subgroups (see :attr:`rule`)."""
        return [r for r in self.rows if r.get("more_exposed")]

    def to_dict(self) -> dict:
        """As stored in ``results.json`` (``slices``)."""
        return {
            "attack": self.attack,
            "method": self.method,
            "rule": self.rule,
            "confidence": self.confidence,
            "n_boot": self.n_boot,
            "min_trials": self.min_trials,
            "min_records": self.min_records,
            "critical_value": self.critical_value,
            "columns": self.columns,
            "overall": self.overall,
            "groups": self.rows,
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per subgroup (index ``column``, ``group``; the first row is all records) with interval
        ends as ``_low`` / ``_high`` columns."""
        return slices_frame(self.to_dict())


def slices_frame(slices: Mapping[str, Any]) -> pd.DataFrame:
    """The ``slices`` block of ``results.json`` as a frame (see :meth:`SliceSummary.to_frame`)."""
    out = []
    for r in [slices["overall"], *slices["groups"]]:
        row: dict[str, Any] = {
            "column": r["column"],
            "group": r["group"],
            "feature": r.get("is_feature"),
            "records": r["n_records"],
            "member_trials": r["member_trials"],
            "nonmember_trials": r["nonmember_trials"],
        }
        for key in ("auc", "eta"):
            ci = r.get(f"{key}_ci") or [None, None]
            row[key], row[f"{key}_low"], row[f"{key}_high"] = r.get(key), ci[0], ci[1]
            if key == "auc":
                for f, v in (r.get("tpr_at_fpr") or {}).items():
                    tci = (r.get("tpr_at_fpr_ci") or {}).get(f) or [None, None]
                    row[f"tpr@{f}"], row[f"tpr@{f}_low"], row[f"tpr@{f}_high"] = v, tci[0], tci[1]
        row["more_exposed"] = r.get("more_exposed")
        row["note"] = r.get("note")
        out.append(row)
    return pd.DataFrame(out).set_index(["column", "group"])


def _as_groups(groups: Any, n: int) -> dict[str, np.ndarray]:
    if isinstance(groups, Mapping):
        items = dict(groups)
    elif isinstance(groups, pd.DataFrame):
        items = {str(c): groups[c].to_numpy() for c in groups.columns}
    else:
        items = {"group": groups}
    out = {}
    for name, vals in items.items():
        arr = vals.to_numpy() if isinstance(vals, pd.Series) else np.asarray(vals)
        if arr.ndim != 1 or arr.size != n:
            raise MipkitValueError(
                f"The slicing column {name!r} must hold one value per record ({n}). Got shape {arr.shape}."
            )
        out[str(name)] = arr
    return out


def slice_summary(
    scores: np.ndarray,
    member: np.ndarray,
    groups: Any,
    *,
    guesses: np.ndarray | None = None,
    features: Mapping[str, bool | None] | Collection[str] | None = None,
    kinds: Mapping[str, str] | None = None,
    fprs: tuple[float, ...] = DEFAULT_FPRS,
    confidence: float = 0.95,
    n_boot: int = 1000,
    min_trials: int = MIN_TRIALS,
    min_records: int = MIN_RECORDS,
    max_levels: int = MAX_LEVELS,
    attack: str | None = None,
    random_state=None,
) -> SliceSummary:
    """AUC, TPR at FPR and eta of one attack per subgroup of records, with cluster-bootstrap intervals.

    Parameters
    ----------
    scores : array of shape (T, n) or (n,)
        The attack's score of every (target model, record) trial (higher = more likely a member); one row when
        a single model was attacked.
    member : bool array of the same shape
        Whether the record was in the target model's training set.
    groups : mapping name -> array of shape (n,), DataFrame, or one array
        Per-record values of each slicing column (see :func:`group_labels` for how values become subgroups).
    guesses : 0/1 array of the same shape, optional
        The attack's hard guesses behind eta (the audit passes its own). By default they are cross-fitted on
        all trials, across the ``T`` rows when ``T >= 2``
        (:func:`mipkit.metrics.attack_summary.crossfit_guesses`).
    features : mapping name -> bool, or collection of names, optional
        Which slicing columns the models saw as features (reported as ``is_feature``; None when not given).
    kinds : mapping name -> str, optional
        What each slicing column is (e.g. ``"true class"``), copied into ``columns``.
    fprs : tuple of float
    confidence : float
    n_boot : int
        Bootstrap replicates (>= 100).
    min_trials, min_records : int
        Smallest subgroup given numbers (see the module notes).
    max_levels : int
        See :func:`group_labels`.
    attack : str, optional
        The attack's name, for the output.
    random_state : int, Generator or None
        Seeds the default guesses' folds and the bootstrap.

    Returns
    -------
    SliceSummary
    """
    s, lab = _check_inputs(scores, member, fprs, confidence, n_boot, min_trials, min_records)
    T, n = s.shape
    cols = _as_groups(groups, n)
    rng = check_random_state(random_state)
    if guesses is None:
        rows_of = np.repeat(np.arange(T), n) if T >= 2 else None
        g = crossfit_guesses(s.ravel(), lab.ravel(), groups=rows_of, random_state=rng).reshape(T, n)
    else:
        g = np.asarray(guesses).reshape(T, n)
    correct = (g.astype(int) == lab).astype(float)
    W, V = pigeonhole_weights(int(n_boot), T, n, rng)
    with _one_thread():
        return _summarise(
            s, lab, correct, W, V, cols, features, kinds or {}, tuple(fprs), confidence, int(n_boot),
            int(min_trials), int(min_records), max_levels, attack,
        )  # fmt: skip


def _check_inputs(
    scores: Any,
    member: Any,
    fprs: tuple[float, ...],
    confidence: float,
    n_boot: int,
    min_trials: int,
    min_records: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``(scores, member)`` as arrays ``(T, n)`` (float, bool), after checking them and the settings of
    slice_summary."""
    s = np.asarray(scores, dtype=float)
    lab = np.asarray(member)
    if s.ndim == 1:
        s, lab = s[None, :], lab.reshape(1, -1)
    if s.ndim != 2 or lab.shape != s.shape:
        raise MipkitValueError(
            f"scores and member must be arrays of the same shape (T, n). Got {s.shape} and {lab.shape}."
        )
    if not np.all(np.isfinite(s)):
        raise MipkitValueError("scores must be finite.")
    if not np.isin(lab, (0, 1, True, False)).all():
        raise MipkitValueError("member must hold 0/1 (or booleans).")
    lab = lab.astype(bool)
    check_interval("confidence", confidence, 0.0, 1.0, owner="slice_summary")
    for f in fprs:
        check_interval("fprs", f, 0.0, 1.0, owner="slice_summary")
    if isinstance(n_boot, bool) or int(n_boot) < 100:
        raise MipkitValueError(f"The 'n_boot' parameter of slice_summary must be >= 100. Got {n_boot!r}.")
    if int(min_trials) < 1 or int(min_records) < 1:
        raise MipkitValueError(
            "The 'min_trials' and 'min_records' parameters of slice_summary must be >= 1. "
            f"Got {min_trials!r} and {min_records!r}."
        )
    return s, lab


def _one_thread():
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)  # many tiny products: BLAS threads only cost time here


def _measure(s, lab, correct, W, V, fprs) -> tuple[dict, dict]:
    """Point estimates and bootstrap replicates of eta, AUC and TPR at each FPR on these trials."""
    est: dict[str, float] = {}
    rep: dict[str, np.ndarray] = {}
    ones = np.ones_like(correct)
    est["eta"] = float(correct.mean() - 0.5)
    rep["eta"] = two_way_ratio_replicates(correct[None], ones, W, V)[:, 0] - 0.5
    est["auc"] = roc_auc(s.ravel(), lab.ravel().astype(int))
    rep["auc"] = weighted_auc_replicates(s, lab, W, V)
    for f in fprs:
        # the rule of the main table (attack_summary.threshold_at_fpr): randomised at tied scores
        flags = threshold_at_fpr(s.ravel(), lab.ravel().astype(int), f).member_flags(s, lab)
        est[fpr_label(f)] = float(flags.sum() / max(lab.sum(), 1))
        rep[fpr_label(f)] = two_way_ratio_replicates(flags[None], lab.astype(float), W, V)[:, 0]
    return est, rep


class _Rows:
    """``rows(column, group, idx, is_feature)``: the output row of the records ``idx`` (None: all), and its
    estimates and bootstrap replicates (None for a subgroup too small to be given numbers)."""

    def __init__(
        self, trials: tuple, fprs: tuple[float, ...], confidence: float, min_trials: int, min_records: int
    ) -> None:
        self.s, self.lab, self.correct, self.W, self.V = trials
        self.fprs, self.confidence = fprs, confidence
        self.min_trials, self.min_records = min_trials, min_records
        self.keys = [fpr_label(f) for f in fprs]

    def __call__(
        self, column: str, group: str, idx: np.ndarray | None, is_feature
    ) -> tuple[dict, tuple | None]:
        min_trials, min_records, confidence, keys = (
            self.min_trials,
            self.min_records,
            self.confidence,
            self.keys,
        )
        sub = (slice(None), idx if idx is not None else slice(None))
        m = self.lab[sub]
        out: dict[str, Any] = {
            "column": column,
            "group": group,
            "is_feature": is_feature,
            "n_records": int(m.shape[1]),
            "member_trials": int(m.sum()),
            "nonmember_trials": int((~m).sum()),
        }
        few = (
            out["member_trials"] < min_trials
            or out["nonmember_trials"] < min_trials
            or out["n_records"] < min_records
        )
        if few:
            out.update(
                auc=None, auc_ci=None, tpr_at_fpr=None, tpr_at_fpr_ci=None, eta=None, eta_ci=None,
                eta_excess_ci=None, auc_excess_ci=None, more_exposed=None, more_exposed_by=[],
                note=f"too few records: fewer than {min_trials} member or non-member trials or fewer "
                f"than {min_records} records",
            )  # fmt: skip
            return out, None
        est, rep = _measure(self.s[sub], m, self.correct[sub], self.W, self.V[:, sub[1]], self.fprs)
        out["auc"] = est["auc"]
        out["auc_ci"] = _interval(est["auc"], rep["auc"], confidence, 0.0, 1.0)
        out["tpr_at_fpr"] = {k: est[k] for k in keys}
        out["tpr_at_fpr_ci"] = {k: _interval(est[k], rep[k], confidence, 0.0, 1.0) for k in keys}
        out["eta"] = est["eta"]
        out["eta_ci"] = _interval(est["eta"], rep["eta"], confidence, -0.5, 0.5)
        out.update(eta_excess_ci=None, auc_excess_ci=None, more_exposed=None, more_exposed_by=[], note=None)
        return out, (est, rep)


def _mark_excess(base: tuple | None, measured: list[tuple[dict, tuple]], confidence: float) -> float | None:
    """Mark each measured subgroup's excess over all records (eta and AUC, simultaneous intervals) in its
    row; returns the critical value (None when nothing was compared)."""
    q = None
    if base is not None and measured:
        b_est, b_rep = base
        est = np.array([st[0][m] - b_est[m] for _, st in measured for m in ("eta", "auc")])
        rep = np.column_stack([st[1][m] - b_rep[m] for _, st in measured for m in ("eta", "auc")])
        lo, hi, q = simultaneous_intervals(est, rep, confidence)
        for j, (r, _) in enumerate(measured):
            r["eta_excess_ci"] = [float(lo[2 * j]), float(hi[2 * j])]
            r["auc_excess_ci"] = [float(lo[2 * j + 1]), float(hi[2 * j + 1])]
            leaks = r["eta_ci"][0] > 0  # a subgroup with no measured leak of its own is not called exposed
            r["more_exposed_by"] = [m for m, i in (("eta", 2 * j), ("auc", 2 * j + 1)) if leaks and lo[i] > 0]
            r["more_exposed"] = bool(r["more_exposed_by"])
    return q


def _summarise(
    s, lab, correct, W, V, cols, features, kinds, fprs, confidence, n_boot, min_trials, min_records,
    max_levels, attack,
) -> SliceSummary:  # fmt: skip
    row = _Rows((s, lab, correct, W, V), fprs, confidence, min_trials, min_records)
    overall, base = row(ALL, "all", None, None)
    rows: list[dict] = []
    measured: list[tuple[dict, tuple]] = []
    columns: dict[str, dict] = {}
    feats = features if isinstance(features, Mapping) else None
    names = set(features) if features is not None and feats is None else None
    for column, values in cols.items():
        codes, levels, binning = group_labels(values, max_levels=max_levels, min_count=min_records)
        is_feature = feats.get(column) if feats is not None else (column in names if names else None)
        columns[column] = {
            "is_feature": is_feature,
            "kind": kinds.get(column, "column"),
            "binning": binning,
            "n_groups": len(levels),
        }
        for k, level in enumerate(levels):
            r, stats = row(column, level, np.flatnonzero(codes == k), is_feature)
            rows.append(r)
            if stats is not None:
                measured.append((r, stats))
    q = _mark_excess(base, measured, confidence)
    return SliceSummary(
        overall=overall,
        rows=rows,
        columns=columns,
        attack=attack,
        confidence=float(confidence),
        n_boot=n_boot,
        min_trials=min_trials,
        min_records=min_records,
        critical_value=None if q is None else float(q),
    )
