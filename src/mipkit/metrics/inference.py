"""Measures of attribute inference on synthetic data against the non-member baseline.

The attacks themselves (which guesses, with which confidence) live in :mod:`mipkit.attacks.inference`; this
module scores their guesses (``docs/theory.md`` section 4, Francis & Wagner eqs. 2, 5, 6):

* a guess is right when it equals the truth as text (categorical secret) or lies within an absolute
  ``tolerance`` of it (numeric secret: a share of the targets' range), except the guess that is one constant
  for every target (the most frequent value, :data:`CONSTANT_ANALYSES`), which is right only where it equals
  the truth (Francis & Wagner's scoring). The tolerance forgives the error of an estimate made from a target's
  known attributes; a constant estimates nobody, and within a tolerance it would be credited with how the
  column's values crowd around one value (half of BankChurners' skewed ``Avg_Open_To_Buy`` lies within 5% of
  its range of the mode), which raises the baseline without anything being inferred about a person. One rule
  for every analysis, attack or baseline: the like-for-like pairs are scored alike on both sides;
* precision ``P = correct / predictions`` (Wilson interval);
* coverage ``C = predictions / targets`` (the prediction rate ``|P| / |T|`` of F&W's procedure, step 3;
  their eq. 4 prints ``TP / (TP + FP + np)``, which is the *success rate* ``correct / targets = P C``,
  reported separately as ``success_rate``);
* precision improvement ``PI = (P_atk - P_base) / (1 - P_base)`` at equal coverage, **like for like**: each
  attack against the same analysis run on the original data without the targets (nearest neighbour against
  nearest neighbour, the model against the same model fitted without the targets; the most-frequent value
  when that analysis was not run), with a paired bootstrap interval over the targets; the headline is the
  strongest like-for-like pair. Comparing one attack with a *different*, stronger analysis mixes the
  attack's weakness with the leak and can make a leak look like a negative PI;
* the baseline precision is measured on the targets the attack chose to predict;
* precision-coverage curves: predict only where the confidence is at least a threshold;
* with control targets, anonymeter's risk ``(a - c) / (1 - c)`` with ``a`` the attack's success rate on
  training targets and ``c`` on control targets; its interval propagates the Wilson half-widths of ``a``
  and ``c`` to first order, as anonymeter does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from mipkit._random import RandomState, check_random_state
from mipkit._validation import MipkitValueError
from mipkit.data.attack_records import InferenceGuesses
from mipkit.stats import Proportion, wilson

#: The analyses whose guess is one constant for every target, whatever is known about it: by default their
#: numeric guesses are right only where exact (:func:`analysis_correct`).
CONSTANT_ANALYSES = frozenset({"most_frequent"})


def is_correct(
    guesses: np.ndarray, truth: np.ndarray, *, numeric: bool, tolerance: float = 0.0
) -> np.ndarray:
    """Which guesses are right: equal text (categorical) or ``|guess - truth| <= tolerance`` (numeric)."""
    if numeric:
        g = np.asarray(guesses, dtype=float)
        t = np.asarray(truth, dtype=float)
        return np.abs(g - t) <= tolerance + 1e-12 * np.maximum(1.0, np.abs(t))
    g = np.asarray(guesses, dtype=object)
    t = np.asarray(truth, dtype=object)
    return np.array([str(a) == str(b) for a, b in zip(g, t, strict=True)], dtype=bool)


def analysis_correct(
    analysis: str,
    guesses: np.ndarray,
    truth: np.ndarray,
    *,
    numeric: bool,
    tolerance: float,
    constant_guess: str = "exact",
) -> np.ndarray:
    """Which guesses of ``analysis`` (``"nearest"``, ``"model"``, ``"most_frequent"``) are right.

    :func:`is_correct` within the absolute ``tolerance``, except the numeric guesses of an analysis in
    :data:`CONSTANT_ANALYSES` when ``constant_guess="exact"`` (the default, Francis & Wagner's scoring): those
    are right only where they equal the truth. ``constant_guess="tolerance"`` scores them like every guess.
    """
    if constant_guess not in ("exact", "tolerance"):
        raise MipkitValueError(f"constant_guess must be 'exact' or 'tolerance'. Got {constant_guess!r}.")
    exact = constant_guess == "exact" and analysis in CONSTANT_ANALYSES
    return is_correct(guesses, truth, numeric=numeric, tolerance=0.0 if exact else tolerance)


def precision_improvement(p_attack: float, p_base: float) -> float:
    """``PI = (P_atk - P_base) / (1 - P_base)`` (Francis & Wagner eq. 6); NaN when ``P_base = 1``."""
    if p_base >= 1.0:
        return float("nan")
    return (p_attack - p_base) / (1.0 - p_base)


@dataclass(frozen=True)
class PrecisionCoverage:
    """Precision and coverage of an inference from raw counts.

    ``correct`` of ``predictions`` predictions were right, out of ``targets`` targets (the rest: no
    prediction).
    """

    correct: int
    predictions: int
    targets: int

    @property
    def precision(self) -> float:
        """``P = correct / predictions`` (NaN without predictions)."""
        return self.correct / self.predictions if self.predictions else float("nan")

    @property
    def coverage(self) -> float:
        """``C = predictions / targets``."""
        return self.predictions / self.targets

    @property
    def success_rate(self) -> float:
        """``correct / targets = P C``."""
        return self.correct / self.targets

    def to_dict(self, confidence: float = 0.95) -> dict:
        ci = list(wilson(self.correct, self.predictions, confidence)) if self.predictions else [None, None]
        return {
            "precision": self.precision,
            "precision_ci": ci,
            "coverage": self.coverage,
            "success_rate": self.success_rate,
            "correct": self.correct,
            "predictions": self.predictions,
            "targets": self.targets,
        }


def _by_confidence(confidence: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(order, last, k)``: most confident first; the end of each group of equal confidence; its size."""
    s = np.asarray(confidence, float).ravel()
    order = np.argsort(-s, kind="stable")
    ss = s[order]
    last = np.r_[ss[1:] != ss[:-1], True]
    return order, last, np.arange(1, s.size + 1)[last]


def precision_coverage_curve(
    correct: np.ndarray, confidence: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision against coverage when predicting only where ``confidence >= threshold``.

    Returns ``(coverage, precision, threshold)`` over the distinct confidence values, from the most
    confident predictions (smallest coverage) to all (coverage 1).
    """
    c = np.asarray(correct, bool).ravel()
    order, last, k = _by_confidence(confidence)
    hits = np.cumsum(c[order])[last]
    return k / c.size, hits / k, np.asarray(confidence, float).ravel()[order][last]


def baseline_at_attack_coverage(
    attack_correct: np.ndarray,
    attack_confidence: np.ndarray,
    baseline_correct: Mapping[str, np.ndarray],
) -> pd.DataFrame:
    """For each threshold of the attack: attack precision, coverage and the baseline's precision on the
    same targets, and the precision improvement (equal coverage, Francis & Wagner Sec. 4.3).

    With several baselines, the best of them at each threshold (pass one for a like-for-like curve)."""
    c = np.asarray(attack_correct, bool)
    order, last, k = _by_confidence(attack_confidence)
    p_atk = np.cumsum(c[order])[last] / k
    p_base = np.max(
        np.vstack([np.cumsum(np.asarray(b, bool)[order])[last] / k for b in baseline_correct.values()]),
        axis=0,
    )
    pi = np.array([precision_improvement(a, b) for a, b in zip(p_atk, p_base, strict=True)])
    return pd.DataFrame(
        {
            "coverage": k / c.size,
            "precision": p_atk,
            "baseline_precision": p_base,
            "precision_improvement": pi,
            "threshold": np.asarray(attack_confidence, float)[order][last],
        }
    )


def anonymeter_risk(attack: Proportion, control: Proportion, confidence: float = 0.95) -> dict:
    """Control-set risk ``(a - c) / (1 - c)`` with anonymeter's first-order propagation of Wilson errors.

    ``a`` and ``c`` are the Wilson-interval centres of the attack and control success rates and their errors
    the Wilson half-widths; ``d risk = sqrt((da / (1 - c))^2 + (dc (1 - a) / (1 - c)^2)^2)``. The risk
    is not clipped at 0 (a negative value: the attack does worse on training targets than on control
    targets) and its interval is ``risk +- d risk`` within [-1, 1].
    """

    def centre_err(p: Proportion) -> tuple[float, float]:
        lo, hi = wilson(p.successes, p.trials, confidence)
        return (lo + hi) / 2, (hi - lo) / 2

    a, da = centre_err(attack)
    c, dc = centre_err(control)
    if c >= 1:
        return {"value": float("nan"), "ci": [None, None], "attack_rate": a, "control_rate": c}
    risk = (a - c) / (1 - c)
    err = np.sqrt((da / (1 - c)) ** 2 + (dc * abs(1 - a) / (1 - c) ** 2) ** 2)
    return {
        "value": float(risk),
        "ci": [float(max(-1.0, risk - err)), float(min(1.0, risk + err))],
        "attack_rate": a,
        "attack_rate_err": da,
        "control_rate": c,
        "control_rate_err": dc,
        "confidence": confidence,
    }


def pi_bootstrap(
    attack_correct: np.ndarray,
    baseline_correct: np.ndarray,
    *,
    n_bootstrap: int = 2000,
    random_state=0,
    refits: tuple[np.ndarray | None, np.ndarray | None] = (None, None),
) -> np.ndarray:
    """Paired bootstrap replicates of ``PI = (P_atk - P_base) / (1 - P_base)`` over the targets and the fits.

    Each replicate resamples the targets with replacement and recomputes both precisions on the same
    resampled targets (the pairing keeps the attack's and the baseline's shared difficulty). ``refits``:
    for the attack and the baseline, which targets each refit on a bootstrap resample of its reference rows
    gets right (shape ``(R, n)``, or None). A side with refits is scored in each replicate by one of its
    refits, drawn at random and independently of the other side's, on the resampled targets: the two-level
    bootstrap (reference rows, then targets), whose percentile interval holds the variability of the fitted
    analyses (``docs/theory.md`` section 4): where a fit's guesses sit at a tolerance edge, the refits
    that cross it move a replicate by their full effect. Replicates with ``P_base = 1`` are NaN.
    """
    rng = check_random_state(random_state)
    a = np.asarray(attack_correct, bool)
    idx = rng.integers(0, a.size, size=(n_bootstrap, a.size))
    p = []
    for c, r in zip((a, np.asarray(baseline_correct, bool)), refits, strict=True):
        # with refits: one refit per replicate (row), its correctness read at the resampled targets
        r_ok = c[idx] if r is None else np.asarray(r, bool)[rng.integers(0, len(r), (n_bootstrap, 1)), idx]
        p.append(r_ok.mean(axis=1))
    pa, pb = p
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pb < 1.0, (pa - pb) / (1.0 - pb), np.nan)


def _percentile_ci(reps: np.ndarray, confidence: float) -> list[float | None]:
    """Percentile interval of the finite replicates (``[None, None]`` without any)."""
    r = reps[np.isfinite(reps)]
    if r.size < 0.5 * max(reps.size, 1):
        return [None, None]
    a = (1.0 - confidence) / 2
    return [float(np.quantile(r, a)), float(np.quantile(r, 1 - a))]


def _at_primary(of: Callable[[Any, str], Any], doc: str) -> property:
    """A read-only property of :class:`InferenceResult`: ``of(result, attack)`` at its headline attack.

    Parameters
    ----------
    of : callable
        ``of(result, attack)``: a per-attack value of the result.
    doc : str
        The property's docstring.

    Returns
    -------
    property
        ``of(self, self.primary)``.
    """
    return property(lambda self: of(self, self.primary), doc=doc)


@dataclass(frozen=True)
class InferenceResult:
    """Attribute inference for one secret: attacks, the non-member baselines and the like-for-like pairs.

    Attributes
    ----------
    attacks, baselines : dict of str to PrecisionCoverage
        Each attack on the synthetic table, each analysis of the non-member baseline.
    pairs : dict of str to str
        For each attack, its like-for-like baseline (the same analysis without the targets, else
        ``"most_frequent"``).
    primary : str
        The headline attack: the strongest like-for-like pair (largest finite PI).
    pi_replicates : dict of str to ndarray
        Paired bootstrap replicates of each pair's PI (:func:`pi_bootstrap`), for intervals at any level.
    tolerance, tolerance_share : float
        A numeric guess is right within ``tolerance`` (absolute, not written to results) =
        ``tolerance_share`` times the targets' range; the most frequent value only where exact (unless
        ``constant_guess="tolerance"``).
    """

    secret: str
    known: tuple[str, ...]
    numeric: bool
    tolerance: float
    attacks: dict[str, PrecisionCoverage]
    baselines: dict[str, PrecisionCoverage]
    primary: str
    curve: pd.DataFrame = field(repr=False)
    control: dict | None = None
    per_target: pd.DataFrame = field(default=None, repr=False)
    pairs: dict[str, str] = field(default_factory=dict)
    pi_replicates: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    tolerance_share: float | None = None
    control_attack: str | None = None

    def baseline_of(self, attack: str) -> str:
        """The like-for-like baseline of ``attack``."""
        return self.pairs.get(attack, "most_frequent" if "most_frequent" in self.baselines else attack)

    def pi_of(self, attack: str) -> float:
        """Like-for-like precision improvement of ``attack``."""
        return precision_improvement(
            self.attacks[attack].precision, self.baselines[self.baseline_of(attack)].precision
        )

    def pi_interval(self, attack: str, confidence: float = 0.95) -> list[float | None]:
        """Paired-bootstrap percentile interval of :meth:`pi_of` at ``confidence``."""
        reps = self.pi_replicates.get(attack)
        return [None, None] if reps is None else _percentile_ci(reps, confidence)

    def headline_level(self, confidence: float = 0.95) -> float:
        """Level of the headline's interval: ``1 - (1 - confidence) / k`` for the ``k`` attacks it is the
        strongest of (Bonferroni, as the verdict's family of (secret, attack) pairs)."""
        return 1.0 - (1.0 - confidence) / max(len(self.attacks), 1)

    def headline_pi_interval(self, confidence: float = 0.95) -> list[float | None]:
        """Interval of the headline PI, adjusted for picking the strongest of the attacks.

        The headline is the largest of ``k`` PIs; each pair's interval at ``1 - (1 - confidence) / k``
        makes the picked one cover its own PI with probability at least ``confidence`` (on null data it
        excludes 0 at most ``1 - confidence`` of the time, where the unadjusted one does up to ``k`` times
        as often)."""
        return self.pi_interval(self.primary, self.headline_level(confidence))

    # The headline numbers: each the per-attack value at the headline attack ``primary``.
    precision = _at_primary(lambda r, a: r.attacks[a].precision, "Precision of the headline attack.")
    baseline = _at_primary(lambda r, a: r.baseline_of(a), "The headline attack's like-for-like baseline.")
    baseline_precision = _at_primary(
        lambda r, a: r.baselines[r.baseline_of(a)].precision,
        "Precision of the headline attack's like-for-like baseline.",
    )
    precision_improvement = _at_primary(
        lambda r, a: r.pi_of(a), "Like-for-like precision improvement of the headline attack."
    )

    @property
    def best_baseline(self) -> str:
        """The baseline analysis with the highest precision (Francis & Wagner's allowed baseline)."""
        return max(self.baselines, key=lambda k: self.baselines[k].precision)

    def pi_note(self, attack: str | None = None) -> str | None:
        """Why the PI of ``attack`` (default: the headline) is not a number, or None."""
        b = self.baselines[self.baseline_of(attack or self.primary)]
        if b.precision >= 1.0:
            return "the baseline is already right on every target: no attack can improve on it"
        return None

    def to_dict(self, confidence: float = 0.95) -> dict:
        best = self.best_baseline
        out = {
            "secret": self.secret,
            "known": list(self.known),
            "type": "numeric" if self.numeric else "categorical",
            "tolerance_share": self.tolerance_share,
            "attack": self.primary,
            "precision": self.precision,
            "precision_ci": self.attacks[self.primary].to_dict(confidence)["precision_ci"],
            "coverage": self.attacks[self.primary].coverage,
            "baseline_precision": self.baseline_precision,
            "baseline": self.baseline,
            "precision_improvement": self.precision_improvement,
            "precision_improvement_ci": self.headline_pi_interval(confidence),
            "precision_improvement_ci_level": self.headline_level(confidence),
            "precision_improvement_note": self.pi_note(),
            "comparison": "like for like: each attack against the same analysis without the targets",
            "pairs": {
                a: {
                    "baseline": self.baseline_of(a),
                    "precision": self.attacks[a].precision,
                    "baseline_precision": self.baselines[self.baseline_of(a)].precision,
                    "precision_improvement": self.pi_of(a),
                    "precision_improvement_ci": self.pi_interval(a, confidence),
                    "note": self.pi_note(a),
                }
                for a in self.attacks
            },
            "best_baseline": best,
            "best_baseline_precision": self.baselines[best].precision,
            "attacks": {k: v.to_dict(confidence) for k, v in self.attacks.items()},
            "baselines": {k: v.to_dict(confidence) for k, v in self.baselines.items()},
            "curve": {c: self.curve[c].to_numpy() for c in self.curve.columns},
        }
        if self.control is not None:
            out["control"] = {**self.control, "attack": self.control_attack}
        return out


def _control_risk(attack_ok: np.ndarray, control_ok: np.ndarray, confidence: float) -> dict:
    """Anonymeter's control-set risk of the first attack: its success on training and on control targets."""
    a_prop = Proportion(int(attack_ok.sum()), int(attack_ok.size), "wilson")
    c_prop = Proportion(int(control_ok.sum()), int(control_ok.size), "wilson")
    return {
        "attack_success": a_prop.to_dict(confidence),
        "control_success": c_prop.to_dict(confidence),
        "risk": anonymeter_risk(a_prop, c_prop, confidence),
    }


def _per_target(rows: np.ndarray, atk_correct: dict, atk_conf: dict, base_correct: dict) -> pd.DataFrame:
    """One row per target: which attack and baseline guesses were right, and the attacks' confidence."""
    return pd.DataFrame(
        {
            "row": rows,
            **{f"attack_{a}_correct": v for a, v in atk_correct.items()},
            **{f"attack_{a}_confidence": v for a, v in atk_conf.items()},
            **{f"baseline_{k}_correct": v for k, v in base_correct.items()},
        }
    )


def measure_inference(
    guesses: InferenceGuesses,
    *,
    confidence: float = 0.95,
    n_bootstrap: int = 2000,
    random_state: RandomState = 0,
    constant_guess: str = "exact",
) -> InferenceResult:
    """Score attribute-inference attacks against their like-for-like non-member baselines.

    Every target gets a guess (coverage 1), scored by :func:`analysis_correct`: a numeric guess is right
    within ``guesses.tolerance``, the most frequent value only where exact (``constant_guess="exact"``, the
    default and Francis & Wagner's scoring; ``"tolerance"`` scores it like the other guesses). Each attack
    ``a`` is paired with the baseline of the same name (the same analysis on the original without the
    targets), else with ``"most_frequent"``; its precision improvement ``PI_a`` gets a paired bootstrap
    interval over the targets (``n_bootstrap`` replicates, :func:`pi_bootstrap`). The headline
    (``primary``) is the pair with the largest finite ``PI_a``; its precision-coverage curve is compared,
    target for target, with its own baseline (Francis & Wagner Sec. 4.3; ``docs/theory.md`` section 4).
    With control guesses (of the first attack), anonymeter's control-set risk is added.
    """

    def right(analysis: str, g: np.ndarray, truth: np.ndarray) -> np.ndarray:
        num, tol = guesses.numeric, guesses.tolerance
        return analysis_correct(analysis, g, truth, numeric=num, tolerance=tol, constant_guess=constant_guess)

    n_t = len(guesses.truth)
    rng = check_random_state(random_state)
    atk_correct = {a: right(a, g, guesses.truth) for a, (g, _) in guesses.attacks.items()}
    atk_conf = {a: np.asarray(c) for a, (_, c) in guesses.attacks.items()}
    base_correct = {b: right(b, g, guesses.truth) for b, g in guesses.baselines.items()}
    atk_pc = {a: PrecisionCoverage(int(v.sum()), n_t, n_t) for a, v in atk_correct.items()}
    base_pc = {b: PrecisionCoverage(int(v.sum()), n_t, n_t) for b, v in base_correct.items()}
    pairs = {a: (a if a in base_correct else "most_frequent") for a in atk_correct}
    missing = [b for b in pairs.values() if b not in base_correct]
    if missing:
        raise MipkitValueError(f"No baseline to pair with: {missing}. Baselines: {list(base_correct)}.")
    refit_ok = {
        k: np.vstack([right(k.split("/")[1], row, guesses.truth) for row in g])
        for k, g in getattr(guesses, "refits", {}).items()
    }
    reps = {
        a: pi_bootstrap(
            atk_correct[a],
            base_correct[b],
            n_bootstrap=n_bootstrap,
            random_state=rng,
            refits=(refit_ok.get(f"attack/{a}"), refit_ok.get(f"baseline/{b}")),
        )  # fmt: skip
        for a, b in pairs.items()
    }
    pis = {a: precision_improvement(atk_pc[a].precision, base_pc[b].precision) for a, b in pairs.items()}
    finite = [a for a in pairs if np.isfinite(pis[a])]
    primary = max(finite, key=lambda a: pis[a]) if finite else next(iter(guesses.attacks))
    curve = baseline_at_attack_coverage(
        atk_correct[primary], atk_conf[primary], {pairs[primary]: base_correct[pairs[primary]]}
    )
    first = next(iter(guesses.attacks))
    ctl = None
    if guesses.control_guesses is not None:
        c_ok = right(first, guesses.control_guesses, guesses.control_truth)
        ctl = _control_risk(atk_correct[first], c_ok, confidence)
    per_target = _per_target(guesses.rows, atk_correct, atk_conf, base_correct)
    return InferenceResult(
        secret=guesses.secret,
        known=tuple(guesses.known),
        numeric=guesses.numeric,
        tolerance=guesses.tolerance,
        attacks=atk_pc,
        baselines=base_pc,
        primary=primary,
        curve=curve,
        control=ctl,
        per_target=per_target,
        pairs=pairs,
        pi_replicates=reps,
        tolerance_share=getattr(guesses, "tolerance_share", None),
        control_attack=first if ctl is not None else None,
    )
