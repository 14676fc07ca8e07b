"""The demo workflow: certify -> audit -> protect (MIP noise) -> audit again, on breast-cancer data.

No network and no data files: the breast-cancer set ships with scikit-learn. :func:`run_demo`

1. says what a familiar guarantee means in MIP terms (``eps = 1`` DP -> eta, :mod:`mipkit.accounting.risk`;
   docs/theory.md section 3);
2. audits a random forest on all 30 features with ``K`` models on random halves: its trees memorise their
   training records, so it leaks measurably (the eta interval excludes 0);
3. protects it: a regularised logistic regression on three features fixed in advance (:data:`DEMO_FEATURES`;
   few, weakly correlated coefficients vary little over random halves, so the noise is small) released
   through :class:`mipkit.mechanisms.mip_noise.MIPNoise` (eta = 0.1, ``"mipkit-gaussian"``): the spread
   sigma of the coefficients over random halves of the pool is estimated ONCE, then every audit fit adds
   noise calibrated to that fixed sigma (:class:`ProtectedLogisticRegression`), so the audit does not
   re-estimate it per fit (docs/theory.md section 2b);
4. audits the protected trainer the same way, and writes one report comparing before and after, with the
   accuracy on a held-out test set (the protected model's: the mean over :data:`DEMO_RELEASES` noisy
   releases, whose noise comes from OS entropy).

It prints nothing: it reports to ``progress(stage, done, total)`` (:mod:`mipkit._progress`): each step is
announced as an uncounted stage (``done == total == 0``) and the fits are counted; ``mipkit demo`` draws
them.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from mipkit._progress import Progress, announce
from mipkit.game.trainers import register_trainer
from mipkit.report.plain_language import (
    demo_certificate_sentence,
    demo_data_text,
    demo_eta_meaning_sentence,
    demo_guarantee_sentence,
    demo_outcome_paragraph,
    demo_sigma_sentence,
    demo_stage_sentence,
)

__all__ = [
    "DEMO_ETA",
    "DEMO_FEATURES",
    "DEMO_MODEL",
    "DEMO_PARAMS",
    "DEMO_PROTECTED_C",
    "DEMO_RELEASES",
    "DemoResult",
    "ProtectedLogisticRegression",
    "run_demo",
]

#: The unprotected model: a random forest, whose fully grown trees memorise their training records.
DEMO_MODEL = "sklearn.ensemble.RandomForestClassifier"
DEMO_PARAMS: dict[str, Any] = {"n_estimators": 100}
#: The protected model's features, fixed in advance (choosing them from the pool would itself leak): with
#: the 30 correlated features the coefficients vary so much over random halves that the noise for the same
#: eta costs about 25 points of accuracy; with these three it costs a few.
DEMO_FEATURES = ("worst radius", "worst texture", "worst concave points")
#: The protected model is regularised: a smaller C shrinks the spread of the coefficients over random
#: halves, hence the MIP noise (docs/theory.md section 2b).
DEMO_PROTECTED_C = 0.1
DEMO_ETA = 0.1
#: Noisy releases whose mean test accuracy is reported (each release draws its noise from OS entropy).
DEMO_RELEASES = 50


@register_trainer
class ProtectedLogisticRegression(ClassifierMixin, BaseEstimator):
    """Logistic regression released through MIPNoise with a fixed per-coordinate ``sigma`` (JSON params).

    An importable trainer with JSON-able parameters, so the audit engine can fit it in worker processes.
    The released coefficients are ``theta + N(0, diag(s^2))`` with ``s`` calibrated from ``sigma`` and
    ``eta`` by MIPNoise's Gaussian Theorem A (docs/theory.md section 2b).

    Parameters
    ----------
    C : float
        Inverse regularisation of the logistic regression.
    eta : float
        MIP target of the noise.
    sigma : list of float
        Per-coordinate spread of (coef_, intercept_) over random halves of the pool, estimated once.
    calibration : str
        MIPNoise calibration.
    random_state : int or None
        Seeds the logistic regression.
    noise_seed : int or None
        MIPNoise's ``noise_seed``: None (a release) draws the noise from OS entropy; the demo's audit sets it
        from each fit's seed.
    sigma_estimated : bool
        ``sigma`` was estimated from fits (the demo's case), so the certificate is approximate: its ``exact``
        is set to False even though MIPNoise receives ``sigma`` as if it were known a priori.
    """

    def __init__(
        self,
        C=1.0,
        eta=0.1,
        sigma=None,
        calibration="mipkit-gaussian",
        random_state=None,
        sigma_estimated=True,
        noise_seed=None,
    ):
        self.sigma_estimated = sigma_estimated
        self.noise_seed = noise_seed
        self.C = C
        self.eta = eta
        self.sigma = sigma
        self.calibration = calibration
        self.random_state = random_state

    def fit(self, X, y):
        from sklearn.linear_model import LogisticRegression

        from mipkit.mechanisms.certificate import guarantee_text
        from mipkit.mechanisms.mip_noise import MIPNoise

        inner = LogisticRegression(C=self.C, max_iter=5000, random_state=self.random_state)
        sigma = None if self.sigma is None else np.asarray(self.sigma, dtype=float)
        self.mip_ = MIPNoise(
            inner, eta=self.eta, calibration=self.calibration, sigma=sigma, random_state=self.random_state,
            noise_seed=self.noise_seed,
        ).fit(X, y)  # fmt: skip
        cert = self.mip_.certificate_
        if self.sigma_estimated and sigma is not None:
            import dataclasses

            source = "estimated once from fits on halves"
            guarantee = guarantee_text(cert.eta, False, cert.train_on, cert.released_with, source)
            cert = dataclasses.replace(cert, exact=False, sigma_source=source, guarantee=guarantee)
        self.certificate_ = cert
        self.classes_ = self.mip_.classes_
        return self

    def predict_proba(self, X):
        return self.mip_.predict_proba(X)

    def predict(self, X):
        return self.mip_.predict(X)


@dataclass(frozen=True)
class DemoResult:
    """What :func:`run_demo` produced.

    Attributes
    ----------
    results : dict
        The fields written to ``results.json`` (kind ``"demo"``): ``summary``, ``eta_before``,
        ``eta_after``, their intervals, test accuracies, ``n_models``, ``seconds``, ...
    report : Path
        The rendered ``report.html``.
    """

    results: dict
    report: Path

    @property
    def summary(self) -> list[str]:
        """The plain-language sentences, in order."""
        return list(self.results["summary"])

    @property
    def seconds(self) -> float:
        """Wall time of the run."""
        return float(self.results["seconds"])

    def to_dict(self) -> dict:
        """``results`` plus ``"report"`` (the path as text)."""
        return {**self.results, "report": str(self.report)}

    def __repr__(self) -> str:
        r = self.results
        return (
            f"DemoResult(eta_before={r['eta_before']:.3f}, eta_after={r['eta_after']:.3f}, "
            f"certified_eta={r['certified_eta']}, report={str(self.report)!r})"
        )


def _load(seed: int):
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    from mipkit.data.io import Dataset

    data = load_breast_cancer()
    X_pool, X_test, y_pool, y_test = train_test_split(
        data.data, data.target, test_size=0.2, stratify=data.target, random_state=seed
    )
    mean, sd = X_pool.mean(axis=0), X_pool.std(axis=0)
    X_pool, X_test = (X_pool - mean) / sd, (X_test - mean) / sd
    names = [str(c) for c in data.feature_names]
    pool = Dataset(
        X=X_pool, y=y_pool.astype(int), feature_names=names, classes=np.array(["malignant", "benign"])
    )
    return pool, X_test, y_test


def _features(pool: Any, X_test: np.ndarray, names: tuple[str, ...]) -> tuple[Any, np.ndarray]:
    """The pool and the test rows restricted to the columns ``names``."""
    from mipkit.data.io import Dataset

    idx = [list(pool.feature_names).index(n) for n in names]
    small = Dataset(X=pool.X[:, idx], y=pool.y, feature_names=list(names), classes=pool.classes)
    return small, X_test[:, idx]


def _fields(audit: Any) -> Mapping[str, Any]:
    """The results.json fields of an :class:`~mipkit.workflows.audit.AuditResult`."""
    return audit.to_dict()


def _stage(audit: Mapping[str, Any], label: str) -> str:
    return demo_stage_sentence(
        label,
        strongest_attack=audit["strongest_attack"],
        eta=audit["eta"],
        eta_ci=audit["eta_ci"],
        tpr_at_1pct=audit["tpr_at_fpr"]["0.01"],
    )


def run_demo(
    out: str | Path,
    *,
    fast: bool = False,
    seed: int = 0,
    n_models: int | None = None,
    progress: Progress | None = None,
) -> DemoResult:
    """Run the demo and write ``out``: ``before/``, ``after/``, ``results.json`` (kind ``"demo"``), report.

    Parameters
    ----------
    out : str or Path
        Run folder (created if needed).
    fast : bool
        Fewer models (8 instead of 16) and fewer sigma fits (20 instead of 50).
    seed : int
        Seeds the train/test split, the audits and the noise; the same seed gives the same results.
    n_models : int, optional
        ``K`` models per audit (overrides ``fast``'s choice); ``min(K, 8)`` of them (4 with ``fast``) serve
        as targets.
    progress : Progress, optional
        ``progress(stage, done, total)``: each step announced (``done == total == 0``), then the fits of
        each audit (:func:`mipkit.engine.run_fits`) and of the spread's estimate counted.

    Returns
    -------
    DemoResult
    """
    from mipkit.accounting.risk import eta_from_dp
    from mipkit.report import rebuild_report, write_results

    t0 = time.perf_counter()
    out = Path(out)
    K = n_models if n_models is not None else (8 if fast else 16)
    base = _audit_config(
        DEMO_MODEL, dict(DEMO_PARAMS), K, seed, fast
    )  # bad K or seed: refused before writing
    pool, X_test, y_test = _load(seed)
    out.mkdir(parents=True, exist_ok=True)
    certify = demo_guarantee_sentence(1.0, eta_from_dp(1.0))
    announce(progress, certify)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before, acc_before = _audit_unprotected(pool, X_test, y_test, base, out, seed, progress)
        after, accs, cert = _protect_and_audit(pool, X_test, y_test, base, out, seed, fast, progress)
    summary = _summary(before, after, acc_before, accs, cert, certify)
    results = _results(pool, X_test, before, after, acc_before, accs, cert, summary, base, fast)
    results["seconds"] = time.perf_counter() - t0
    from mipkit._runfolder import staged_writes

    with staged_writes(out, replaces=("results.json", "report.html")):  # committed together
        write_results(out, results, kind="demo")
        report = rebuild_report(out)
    return DemoResult(results=results, report=Path(report))


def _audit_config(model: str, params: dict, K: int, seed: int, fast: bool) -> Any:
    """The demo's audit settings: LOSS, LiRA and RMIA over ``K`` models, ``min(K, 8)`` (4 fast) targets."""
    from mipkit.workflows.audit import AuditConfig

    T = min(K, 4 if fast else 8)
    attacks = ("loss", "lira", "rmia")
    return AuditConfig(model=model, params=params, attacks=attacks, n_models=K, n_targets=T, seed=seed)


def _audit_unprotected(
    pool, X_test, y_test, base, out: Path, seed: int, progress: Progress | None
) -> tuple[dict, float]:
    """The audit of the unprotected random forest and its test accuracy."""
    from sklearn.ensemble import RandomForestClassifier

    from mipkit.workflows.audit import audit

    announce(progress, f"Auditing an unprotected random forest ({base.n_models} models on random halves)...")
    before = _fields(audit(pool, base, run_dir=out / "before", progress=progress, report=False))
    plain = RandomForestClassifier(**DEMO_PARAMS, random_state=seed).fit(pool.X, pool.y)
    return before, float(plain.score(X_test, y_test))


def _protect_and_audit(
    pool, X_test, y_test, base, out: Path, seed: int, fast: bool, progress: Progress | None
) -> tuple[dict, list[float], Any]:
    """The protected model (logistic regression with MIP noise): its spread estimated once on random
    halves, its audit, and its test accuracy over ``DEMO_RELEASES`` noisy releases."""
    from sklearn.linear_model import LogisticRegression

    from mipkit.mechanisms.mip_noise import MIPNoise
    from mipkit.workflows.audit import audit

    announce(
        progress,
        f"Protecting it: a logistic regression on {len(DEMO_FEATURES)} features (C = {DEMO_PROTECTED_C}) "
        f"with MIP noise (eta = {DEMO_ETA}); estimating the spread over random halves once...",
    )
    small, X_test_small = _features(pool, X_test, DEMO_FEATURES)
    calib = MIPNoise(
        LogisticRegression(C=DEMO_PROTECTED_C, max_iter=5000),
        eta=DEMO_ETA,
        calibration="mipkit-gaussian",
        n_estimates=20 if fast else 50,
        train_on="half",
        random_state=seed,
    ).fit(small.X, small.y, progress=progress)
    sigma = [float(s) for s in calib.certificate_.sigma]
    params = {"C": DEMO_PROTECTED_C, "eta": DEMO_ETA, "sigma": sigma, "calibration": "mipkit-gaussian"}
    protected = _audit_config(f"{__name__}.ProtectedLogisticRegression", params, base.n_models, seed, fast)
    announce(progress, "Auditing the protected model...")
    after = _fields(audit(small, protected, run_dir=out / "after", progress=progress, report=False))
    accs = [
        float(
            ProtectedLogisticRegression(C=DEMO_PROTECTED_C, eta=DEMO_ETA, sigma=sigma, random_state=seed)
            .fit(small.X, small.y)
            .score(X_test_small, y_test)
        )
        for _ in range(DEMO_RELEASES)
    ]
    return after, accs, calib.certificate_


def _summary(before: dict, after: dict, acc_before: float, accs: list, cert, certify: str) -> list[str]:
    """The demo's summary: the outcome paragraph first, then one sentence per step."""
    acc_after = float(np.mean(accs))
    kind = "exact" if cert.exact else "approximate"
    after_label = (
        f"After protection (logistic regression on {len(DEMO_FEATURES)} features, C = {DEMO_PROTECTED_C}, "
        f"MIP noise; certified eta <= {DEMO_ETA}, {kind})"
    )
    return [
        demo_outcome_paragraph(
            eta_before=before["eta"],
            eta_before_ci=before["eta_ci"],
            eta_after=after["eta"],
            eta_after_ci=after["eta_ci"],
            certified_eta=DEMO_ETA,
            accuracy_before=acc_before,
            accuracy_after=acc_after,
        ),
        certify,
        _stage(before, "Before protection (random forest, 30 features)")
        + f" Test accuracy {100 * acc_before:.1f}%.",
        _stage(after, after_label)
        + f" Test accuracy {100 * acc_after:.1f}% (mean of {DEMO_RELEASES} noisy releases).",
        demo_eta_meaning_sentence(DEMO_ETA, exact=bool(cert.exact)),
        demo_certificate_sentence(after["eta_ci"][0], DEMO_ETA),
        demo_sigma_sentence(cert.n_fits),
    ]


def _results(pool, X_test, before, after, acc_before, accs, cert, summary, base, fast: bool) -> dict:
    """The demo's ``results.json`` payload (kind ``"demo"``)."""
    acc_after = float(np.mean(accs))
    stages = {
        "before": {
            "folder": "before",
            "label": "Before protection (random forest)",
            "test_accuracy": acc_before,
        },
        "after": {
            "folder": "after",
            "label": f"After MIP noise (eta = {DEMO_ETA}; logistic regression on {len(DEMO_FEATURES)} "
            f"features, C = {DEMO_PROTECTED_C:g})",
            "test_accuracy": acc_after,
            "test_accuracy_releases": accs,
            "sigma_fits": cert.n_fits,
        },
    }
    return {
        "title": "mipkit demo: audit, protect with MIP noise, audit again (breast cancer)",
        "summary": summary,
        "text": [demo_data_text(pool.X.shape[0], X_test.shape[0], DEMO_FEATURES, DEMO_PROTECTED_C)],
        "stages": stages,
        "eta_before": before["eta"],
        "eta_before_ci": before["eta_ci"],
        "eta_after": after["eta"],
        "eta_after_ci": after["eta_ci"],
        "certified_eta": DEMO_ETA,
        "test_accuracy_before": acc_before,
        "test_accuracy_after": acc_after,
        "n_models": base.n_models,
        "n_targets": base.n_targets,
        "fast": fast,
    }
