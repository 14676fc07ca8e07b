"""Measures of the singling-out attack against a non-member control (``docs/theory.md`` section 6).

The attack (:mod:`mipkit.attacks.singling_out`) writes ``m`` predicates from the synthetic data; predicate
``i`` matches ``M_i`` of the ``N`` distinct training (original) records and ``C_i`` of the ``N_c`` distinct
control records. It succeeds on a table when it matches exactly one record there.

* attack success ``a = #{i : M_i = 1} / m`` (Wilson interval), and the same ``c`` on the control table;
* a predicate singles out a small table more easily than a large one, so the two are compared **at one
  size**, the smaller one ``n* = min(N, N_c)``, exactly: the larger table's success is its expected success
  over all its ``n*``-row subsets, ``mean_i P(H_i = 1)`` with ``H_i ~ Hypergeometric(N, M_i, n*)``
  (:func:`subsample_success`). Under the null (training and control records exchangeable draws of one
  population, the predicates written without them) both expectations are equal: no model is needed;
* risk ``(a* - c*) / (1 - c*)`` at that size, with anonymeter's first-order propagation of the two Wilson
  half-widths (:func:`mipkit.metrics.inference.anonymeter_risk`; the subsampled rate is an average of
  probabilities, whose variance is at most a Bernoulli's, so its Wilson interval is conservative);
* anonymeter (Giomi et al. 2023, Sec. 4.1) instead brings a *smaller* control up to the original's size
  with a model of the success count of an ``n``-row table,
  ``S(n) = norm * int_0^w (n x (1 - x)^(n - 1)) dx = norm ((1 - (n w + 1)(1 - w)^n) / (n + 1))``
  (predicates of weight below ``w``; Cohen & Nissim 2020), ``c <- c S(N) / S(N_c)``. mipkit reports that
  too (``extrapolated``), fitted by least squares to the *exact* expected success of ``n``-row subsets of the
  control at ten sizes from ``min(1000, N_c / 2)`` to ``N_c`` (anonymeter: five random subsamples per size),
  with the risk ``(a - c) / (1 - c)`` at the original's full size. It is a 4-fold extrapolation on
  anonymeter's Adult trio, and the model's shape decides the answer (``docs/audit-synthetic.md``).

The success rates are counted over the predicates actually found (anonymeter divides by the number asked
for, which lowers every rate when fewer are found).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from mipkit.data.attack_records import SinglingOutCounts
from mipkit.metrics.inference import anonymeter_risk
from mipkit.stats import Proportion

__all__ = ["SinglingOutResult", "measure_singling_out", "size_corrected_control", "subsample_success"]


def subsample_success(counts: np.ndarray, n_rows: int, size: int) -> float:
    """Expected share of predicates that single out a random ``size``-row subset of an ``n_rows`` table.

    ``mean_i P(H_i = 1)``, ``H_i ~ Hypergeometric(n_rows, counts_i, size)``: the chance that exactly one of
    predicate ``i``'s ``counts_i`` matching rows is drawn. ``size = n_rows`` gives ``mean_i [counts_i = 1]``.
    """
    from scipy.stats import hypergeom  # here: scipy.stats takes a second to import

    c = np.asarray(counts, dtype=np.int64)
    if c.size == 0:
        return float("nan")
    return float(np.mean(hypergeom.pmf(1, int(n_rows), c, int(size))))


def _model(n: np.ndarray, w: float, norm: float) -> np.ndarray:
    """``norm * int_0^w n x (1 - x)^(n - 1) dx`` (anonymeter's singling-out probability integral)."""
    n = np.asarray(n, dtype=float)
    return norm * (1.0 - (n * w + 1.0) * (1.0 - w) ** n) / (n + 1.0)


def size_corrected_control(counts: np.ndarray, n_control: int, n_original: int) -> tuple[float, dict]:
    """The control's success rate at the original's size, and how it was obtained (module docstring)."""
    c = np.asarray(counts, dtype=np.int64)
    raw = float(np.mean(c == 1)) if c.size else float("nan")
    if n_control == n_original or c.size == 0:
        return raw, {"method": "none (equal sizes)", "factor": 1.0, "raw_rate": raw}
    if n_control > n_original:
        rate = subsample_success(c, n_control, n_original)
        return rate, {
            "method": "exact subsampling of the control to the original's size (hypergeometric)",
            "factor": rate / raw if raw > 0 else None,
            "raw_rate": raw,
        }
    sizes = np.unique(np.linspace(min(1000, max(1, n_control // 2)), n_control, 10).astype(int))
    curve = np.array([subsample_success(c, n_control, s) for s in sizes])
    info = {"method": "extrapolated with anonymeter's fitted model", "raw_rate": raw, "sizes": sizes.tolist()}
    if raw == 0 or not np.any(curve > 0):
        return raw, {**info, "factor": 1.0, "note": "no control success: nothing to extrapolate"}
    w0 = 1.0 / sizes.max()
    norm0 = 1.0 / float(_model(sizes.max(), w0, 1.0))
    try:
        from scipy import optimize  # here: 0.3 s of import that only singling out needs

        with warnings.catch_warnings():  # the parameters' covariance is not used
            warnings.simplefilter("ignore", optimize.OptimizeWarning)
            (w, norm), _ = optimize.curve_fit(_model, sizes, curve, p0=(w0, norm0), bounds=(0, (1, np.inf)))
        factor = float(_model(n_original, w, norm) / _model(n_control, w, norm))
    except (RuntimeError, ValueError, ZeroDivisionError, FloatingPointError):
        return raw, {**info, "factor": 1.0, "note": "the model could not be fitted: no correction"}
    if not np.isfinite(factor):
        return raw, {**info, "factor": 1.0, "note": "the fitted model is degenerate: no correction"}
    return min(1.0, raw * factor), {**info, "factor": factor, "w_eff": float(w), "norm": float(norm)}


@dataclass(frozen=True)
class SinglingOutResult:
    """Singling-out success on training and control records and the risk against the control.

    Attributes
    ----------
    attack : Proportion or None
        Predicates that single out a training record, of those found (``None`` when none was found).
    control_raw : Proportion or None
        The same on the control table, at its own size.
    equal_size : dict or None
        ``size`` = the smaller table's, and both success rates at that size (module docstring).
    risk : dict or None
        ``(a* - c*) / (1 - c*)`` at equal size, with its interval.
    extrapolated : dict or None
        anonymeter's method (control smaller than the original only): the control's success brought to the
        original's size by the fitted model, ``size_correction`` (how) and the risk at full size.
    """

    mode: str
    n_requested: int
    n_predicates: int
    n_cols: int
    attempts: int
    attack: Proportion | None
    control_raw: Proportion | None
    equal_size: dict | None
    risk: dict | None
    extrapolated: dict | None = None
    sizes: dict = field(default_factory=dict)

    def to_dict(self, confidence: float = 0.95) -> dict:
        return {
            "mode": self.mode,
            "n_requested": self.n_requested,
            "n_predicates": self.n_predicates,
            "n_cols": self.n_cols,
            "attempts": self.attempts,
            "attack_success": None if self.attack is None else self.attack.to_dict(confidence),
            "control_success_raw": None if self.control_raw is None else self.control_raw.to_dict(confidence),
            "equal_size": self.equal_size,
            "risk": self.risk,
            "extrapolated": self.extrapolated,
            "distinct_rows": self.sizes,
            "note": None if self.n_predicates else "no predicate singles out the synthetic data",
        }


def measure_singling_out(counts: SinglingOutCounts, *, confidence: float = 0.95) -> SinglingOutResult:
    """Success rates on training and control records and the control-set risk (module docstring)."""
    m = int(len(counts.counts_original))
    sizes = {"original": counts.n_original, "control": counts.n_control, "synthetic": counts.n_synthetic}
    common = {
        "mode": counts.mode,
        "n_requested": counts.n_requested,
        "n_predicates": m,
        "n_cols": counts.n_cols,
        "attempts": counts.attempts,
        "sizes": sizes,
    }
    if m == 0:
        return SinglingOutResult(**common, attack=None, control_raw=None, equal_size=None, risk=None)
    attack = Proportion(int(np.sum(counts.counts_original == 1)), m, "wilson")
    if counts.counts_control is None:
        return SinglingOutResult(**common, attack=attack, control_raw=None, equal_size=None, risk=None)
    n_o, n_c = int(counts.n_original), int(counts.n_control)
    raw = Proportion(int(np.sum(counts.counts_control == 1)), m, "wilson")
    size = min(n_o, n_c)
    a_eq = subsample_success(counts.counts_original, n_o, size)
    c_eq = subsample_success(counts.counts_control, n_c, size)
    subsampled = "none (equal sizes)" if n_o == n_c else ("training" if n_o > n_c else "control")
    equal = {"size": size, "subsampled": subsampled, "attack_success": a_eq, "control_success": c_eq}
    risk = anonymeter_risk(Proportion(a_eq * m, m, "wilson"), Proportion(c_eq * m, m, "wilson"), confidence)
    extrapolated = None
    if n_c < n_o:
        rate, info = size_corrected_control(counts.counts_control, n_c, n_o)
        extrapolated = {
            "control_success": rate,
            "size_correction": info,
            "risk": anonymeter_risk(attack, Proportion(rate * m, m, "wilson"), confidence),
        }
    return SinglingOutResult(
        **common, attack=attack, control_raw=raw, equal_size=equal, risk=risk, extrapolated=extrapolated
    )
