"""Attribute inference on released synthetic data, measured against the non-member baseline.

Threat model: the attacker knows some attributes of a target (``known``) and the synthetic table, and guesses
one ``secret`` attribute. Two attacks are run on the synthetic table:

* ``nearest``: the secret of the closest synthetic record on the known columns (mixed distance);
  confidence = minus that distance. This is anonymeter's ``InferenceEvaluator`` attack.
* ``model``: a model trained on the synthetic table (logistic regression for a categorical secret,
  ridge regression for a numeric one, on standardised + one-hot known columns); confidence = the largest
  class probability (categorical), none for numeric secrets.

An inference is a vulnerability only beyond what can be learned without the target's record. The
**non-member baseline** (Francis & Wagner, Sec. 4.3) runs the same analyses on the *original* table with the
targets removed, plus the most-frequent-value guess (median for a numeric secret), and keeps the best of
them. Measures (Francis & Wagner eqs. 2, 5, 6):

* precision ``P = correct / predictions`` (Wilson interval);
* coverage ``C = predictions / targets`` (the prediction rate ``|P| / |T|`` of F&W's procedure, step 3;
  their eq. 4 prints ``TP / (TP + FP + np)``, which is the *success rate* ``correct / targets = P C``,
  reported separately as ``success_rate``);
* precision improvement ``PI = (P_atk - P_base) / (1 - P_base)`` at equal coverage: the baseline precision
  is measured on the targets the attack chose to predict;
* precision-coverage curves: predict only where the confidence is at least a threshold.

Numeric secrets count as correct within ``tolerance`` times the column's range in the original (default 5%),
the same absolute error for attack and baseline.

With a ``control`` table (records from the population that were not used to build the synthetic data) the
anonymeter-style risk ``(a - c) / (1 - c)`` is also reported, with ``a`` the attack's success rate on
training targets and ``c`` on control targets; its interval propagates the Wilson half-widths of ``a`` and
``c`` to first order, as anonymeter does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from mipkit._random import RandomState, check_random_state
from mipkit._validation import MipkitValueError, check_positive_int, check_probability
from mipkit.data.distance import kneighbors
from mipkit.data.tables import TableSchema, encode_euclidean, encode_mixed
from mipkit.metrics import Proportion, wilson


# --------------------------------------------------------------------------------------------------
# measures
# --------------------------------------------------------------------------------------------------
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
        return self.correct / self.predictions if self.predictions else float("nan")

    @property
    def coverage(self) -> float:
        return self.predictions / self.targets

    @property
    def success_rate(self) -> float:
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


def precision_coverage_curve(
    correct: np.ndarray, confidence: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision against coverage when predicting only where ``confidence >= threshold``.

    Returns ``(coverage, precision, threshold)`` over the distinct confidence values, from the most
    confident predictions (smallest coverage) to all (coverage 1).
    """
    c = np.asarray(correct, bool).ravel()
    s = np.asarray(confidence, float).ravel()
    order = np.argsort(-s, kind="stable")
    cs, ss = c[order], s[order]
    last = np.r_[ss[1:] != ss[:-1], True]  # end of each group of equal confidence
    k = np.arange(1, c.size + 1)[last]
    hits = np.cumsum(cs)[last]
    return k / c.size, hits / k, ss[last]


def baseline_at_attack_coverage(
    attack_correct: np.ndarray,
    attack_confidence: np.ndarray,
    baseline_correct: dict[str, np.ndarray],
) -> pd.DataFrame:
    """For each threshold of the attack: attack precision, coverage and the best baseline's precision on the
    same targets, and the precision improvement (equal coverage, Francis & Wagner Sec. 4.3)."""
    c = np.asarray(attack_correct, bool)
    s = np.asarray(attack_confidence, float)
    order = np.argsort(-s, kind="stable")
    ss = s[order]
    last = np.r_[ss[1:] != ss[:-1], True]
    k = np.arange(1, c.size + 1)[last]
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
            "threshold": ss[last],
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


# --------------------------------------------------------------------------------------------------
# analyses (each returns guesses and a confidence, higher = more confident)
# --------------------------------------------------------------------------------------------------
def nearest_neighbor_guesses(
    targets: pd.DataFrame,
    reference: pd.DataFrame,
    *,
    secret: str,
    known: Sequence[str],
    schema: TableSchema,
    n_jobs: int = 2,
    progress: Callable[[int], None] | None = None,
    encoded: Callable[[pd.DataFrame], object] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Guess each target's secret as that of its nearest reference record on the known columns.

    ``encoded(df)``, if given, returns ``df``'s known columns encoded by :func:`encode_mixed` (a cache).
    """
    sub = schema.subset(known)
    enc = encoded or (lambda df: encode_mixed(df, sub))
    d, idx = kneighbors(
        enc(targets),
        enc(reference),
        k=1,
        metric="mixed",
        n_jobs=n_jobs,
        progress=progress,
    )
    return reference[secret].to_numpy()[idx[:, 0]], -d[:, 0]


def default_model(numeric: bool):
    """Logistic regression (categorical secret) or ridge regression (numeric secret)."""
    from sklearn.linear_model import LogisticRegression, Ridge

    return Ridge(alpha=1.0) if numeric else LogisticRegression(max_iter=300)


def model_guesses(
    targets: pd.DataFrame,
    reference: pd.DataFrame,
    *,
    secret: str,
    known: Sequence[str],
    schema: TableSchema,
    numeric: bool,
    model_factory: Callable[[bool], object] = default_model,
) -> tuple[np.ndarray, np.ndarray]:
    """Fit ``model_factory(numeric)`` on the reference table (known -> secret), predict for the targets.

    Features: :func:`mipkit.data.tables.encode_euclidean` of the known columns (standardised numerics with
    missing indicators, one-hot categories). Confidence: the largest predicted class probability, or 0 for
    every target (numeric secrets, or a model without ``predict_proba``).
    """
    sub = schema.subset(known)
    keep = reference[secret].notna().to_numpy()
    X_ref = encode_euclidean(reference.loc[keep], sub)
    X_tgt = encode_euclidean(targets, sub)
    y = reference.loc[keep, secret].to_numpy()
    if not numeric:
        y = np.array([str(v) for v in y], dtype=object)
        classes = np.unique(y)
        if classes.size == 1:
            return np.full(len(targets), classes[0], dtype=object), np.ones(len(targets))
    model = model_factory(numeric)
    model.fit(X_ref, y.astype(float) if numeric else y)
    guesses = model.predict(X_tgt)
    if not numeric and hasattr(model, "predict_proba"):
        conf = model.predict_proba(X_tgt).max(axis=1)
    else:
        conf = np.zeros(len(targets))
    return guesses, conf


def most_frequent_guesses(reference: pd.DataFrame, *, secret: str, n: int, numeric: bool) -> np.ndarray:
    """The most frequent value of the secret (median for a numeric secret), for every target."""
    col = reference[secret].dropna()
    if numeric:
        return np.full(n, float(np.median(col.to_numpy(dtype=float))))
    text = col.map(str)
    return np.full(n, text.value_counts().index[0], dtype=object)


# --------------------------------------------------------------------------------------------------
# the whole attribute-inference audit for one secret
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class InferenceResult:
    """Attribute inference for one secret: attacks, the non-member baseline and the comparison."""

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

    @property
    def precision(self) -> float:
        return self.attacks[self.primary].precision

    @property
    def baseline_precision(self) -> float:
        return max(b.precision for b in self.baselines.values())

    @property
    def precision_improvement(self) -> float:
        return precision_improvement(self.precision, self.baseline_precision)

    def to_dict(self) -> dict:
        best = max(self.baselines, key=lambda k: self.baselines[k].precision)
        out = {
            "secret": self.secret,
            "known": list(self.known),
            "type": "numeric" if self.numeric else "categorical",
            "tolerance": self.tolerance,
            "attack": self.primary,
            "precision": self.precision,
            "precision_ci": self.attacks[self.primary].to_dict()["precision_ci"],
            "coverage": self.attacks[self.primary].coverage,
            "baseline_precision": self.baseline_precision,
            "baseline": best,
            "precision_improvement": self.precision_improvement,
            "attacks": {k: v.to_dict() for k, v in self.attacks.items()},
            "baselines": {k: v.to_dict() for k, v in self.baselines.items()},
            "curve": {c: self.curve[c].to_numpy() for c in self.curve.columns},
        }
        if self.control is not None:
            out["control"] = self.control
        return out


def attribute_inference(
    original: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    secret: str,
    schema: TableSchema,
    known: Sequence[str] | None = None,
    control: pd.DataFrame | None = None,
    n_attacks: int = 500,
    tolerance: float = 0.05,
    attacks: Sequence[str] = ("nearest", "model"),
    model_factory: Callable[[bool], object] = default_model,
    confidence: float = 0.95,
    random_state: RandomState = None,
    n_jobs: int = 2,
    non_member_baseline: bool = True,
) -> InferenceResult:
    """Attribute inference of ``secret`` from ``known`` columns against the non-member baseline.

    Parameters
    ----------
    original, synthetic : DataFrame
        The training data of the generator and its synthetic output.
    secret : str
    schema : TableSchema
        From :func:`mipkit.data.tables.check_tables` on the tables of the audit.
    known : sequence of str, optional
        Default: every other column of the schema.
    control : DataFrame, optional
        Records from the population not used for training: adds anonymeter's control-set risk.
    n_attacks : int
        Number of targets drawn from the original (and from the control table).
    tolerance : float
        Numeric secrets: a guess is right within ``tolerance * range`` of the original's column.
    attacks : sequence of {"nearest", "model"}
        Attacks to run; the first is the primary one (reported as ``precision``).
    non_member_baseline : bool
        Run each attack against the original minus the targets (the non-member baseline). ``False`` keeps
        only the most-frequent-value baseline: the work of anonymeter's ``InferenceEvaluator`` (attack
        on the synthetic data, control attack), e.g. for timing comparisons.
    """
    if secret not in schema.columns:
        raise MipkitValueError(
            f"The secret column {secret!r} is not in the table. Columns: {list(schema.columns)}."
        )
    known = [c for c in schema.columns if c != secret] if known is None else list(known)
    bad = [c for c in known if c not in schema.columns]
    if bad:
        raise MipkitValueError(f"Known column(s) {', '.join(map(repr, bad))} not in the table.")
    if secret in known:
        raise MipkitValueError(f"The secret column {secret!r} cannot also be a known column.")
    if not known:
        raise MipkitValueError("Attribute inference needs at least one known column.")
    unknown_attacks = [a for a in attacks if a not in ("nearest", "model")]
    if unknown_attacks or not attacks:
        raise MipkitValueError(
            f"The 'attacks' parameter must hold 'nearest' and/or 'model'. Got {list(attacks)}."
        )
    n_attacks = check_positive_int("n_attacks", n_attacks, owner="attribute_inference")
    tolerance = check_probability("tolerance", tolerance, owner="attribute_inference")
    rng = check_random_state(random_state)
    numeric = secret in schema.numeric
    tol = tolerance * float(schema.num_range[schema.numeric.index(secret)]) if numeric else 0.0

    pool = np.flatnonzero(original[secret].notna().to_numpy())
    if pool.size < 2:
        raise MipkitValueError(f"The secret column {secret!r} has fewer than 2 non-missing values.")
    n_t = min(n_attacks, pool.size - 1)
    tgt_idx = np.sort(rng.choice(pool, size=n_t, replace=False))
    targets = original.iloc[tgt_idx]
    keep = np.ones(len(original), dtype=bool)
    keep[tgt_idx] = False
    rest = original.iloc[keep]
    truth = targets[secret].to_numpy()
    syn = synthetic[synthetic[secret].notna()]

    sub = schema.subset(known)
    cache: dict[int, tuple[pd.DataFrame, object]] = {}

    def encoded(df: pd.DataFrame):
        if id(df) not in cache:
            cache[id(df)] = (df, encode_mixed(df, sub))  # keep df alive so its id stays unique
        return cache[id(df)][1]

    def run(analysis: str, reference: pd.DataFrame, tgts: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        if analysis == "nearest":
            return nearest_neighbor_guesses(
                tgts, reference, secret=secret, known=known, schema=schema, n_jobs=n_jobs, encoded=encoded
            )
        return model_guesses(
            tgts,
            reference,
            secret=secret,
            known=known,
            schema=schema,
            numeric=numeric,
            model_factory=model_factory,
        )

    atk_correct, atk_conf, atk_pc = {}, {}, {}
    for a in attacks:
        g, conf = run(a, syn, targets)
        atk_correct[a] = is_correct(g, truth, numeric=numeric, tolerance=tol)
        atk_conf[a] = conf
        atk_pc[a] = PrecisionCoverage(int(atk_correct[a].sum()), n_t, n_t)
    base_correct, base_pc = {}, {}
    rest_ok = rest[rest[secret].notna()]
    for a in attacks if non_member_baseline else ():
        g, _ = run(a, rest_ok, targets)
        base_correct[a] = is_correct(g, truth, numeric=numeric, tolerance=tol)
    g = most_frequent_guesses(rest_ok, secret=secret, n=n_t, numeric=numeric)
    base_correct["most_frequent"] = is_correct(g, truth, numeric=numeric, tolerance=tol)
    for k, v in base_correct.items():
        base_pc[k] = PrecisionCoverage(int(v.sum()), n_t, n_t)
    primary = attacks[0]
    curve = baseline_at_attack_coverage(atk_correct[primary], atk_conf[primary], base_correct)

    ctl = None
    if control is not None:
        cpool = np.flatnonzero(control[secret].notna().to_numpy())
        if cpool.size:
            c_idx = np.sort(rng.choice(cpool, size=min(n_attacks, cpool.size), replace=False))
            c_t = control.iloc[c_idx]
            g, _ = run(primary, syn, c_t)
            c_ok = is_correct(g, c_t[secret].to_numpy(), numeric=numeric, tolerance=tol)
            a_prop = Proportion(int(atk_correct[primary].sum()), n_t, "wilson")
            c_prop = Proportion(int(c_ok.sum()), int(c_ok.size), "wilson")
            ctl = {
                "attack_success": a_prop.to_dict(confidence),
                "control_success": c_prop.to_dict(confidence),
                "risk": anonymeter_risk(a_prop, c_prop, confidence),
            }
    per_target = pd.DataFrame(
        {
            "row": tgt_idx,
            **{f"attack_{a}_correct": atk_correct[a] for a in attacks},
            **{f"attack_{a}_confidence": atk_conf[a] for a in attacks},
            **{f"baseline_{k}_correct": v for k, v in base_correct.items()},
        }
    )
    return InferenceResult(
        secret=secret,
        known=tuple(known),
        numeric=numeric,
        tolerance=tol,
        attacks=atk_pc,
        baselines=base_pc,
        primary=primary,
        curve=curve,
        control=ctl,
        per_target=per_target,
    )
