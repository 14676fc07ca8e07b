"""Audit a trained model: the membership game with reference models, four attacks, metrics and a run folder.

The protocol is LiRA's evaluation (Carlini et al. 2022, Sec. 4.1 / Alg. 1 and the released code):

1. ``K`` models are trained, each on its own uniformly random half of the record pool
   (:func:`independent_halves`; see there why not LiRA's exactly balanced design), through
   :func:`mipkit.engine.runner.run_fits` with a SQLite ledger so that re-running the same command resumes
   without refitting.
2. Each of the first ``T`` models in turn is the *target*; the other ``K - 1`` are the attacker's
   *reference* models (leave-one-out over models). Every (target model, record) pair is a trial of the
   membership game with a known label ``in_mask[t, i]``; there are ``T n`` trials, about half members.
3. Each attack scores every record against every target model from the models' ``predict_proba`` outputs:
   LOSS (Yeom et al.), LiRA online and offline (Carlini et al.), RMIA online and offline (Zarifzadeh et al.;
   the population ``z`` is the whole record pool, which the attacker knows without knowing who is IN), and
   the LTU game (Pedersen, ch. 4-5; score strategy on the same fits).
4. Scores are pooled over targets and summarised by :func:`mipkit.metrics.attack_summary.summarize_attack`:
   AUC, TPR at low FPR with Clopper-Pearson intervals, the empirical eta of hard guesses made with a
   threshold cross-fitted across target models, balanced accuracy, and precision at base rates.

The run folder holds ``config.json``, ``results.json`` (kind ``"audit"``), ``scores.parquet`` (one row per
record: per-attack vulnerability), ``ledger.sqlite`` and ``report.html``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from mipkit._validation import MipkitValueError, check_choice, check_interval
from mipkit.data.io import Dataset, features_target, read_table
from mipkit.metrics.attack_summary import AttackSummary, fpr_label, summarize_attack
from mipkit.metrics.intervals import clopper_pearson
from mipkit.metrics.roc import DEFAULT_BASE_RATES, DEFAULT_FPRS
from mipkit.report.results import write_json_atomic, write_results

ATTACK_FAMILIES = ("loss", "lira", "rmia", "ltu")
"""What ``--attacks`` accepts; ``lira`` and ``rmia`` each give an online and an offline row."""

ATTACK_ROWS = {
    "loss": ("loss",),
    "lira": ("lira-online", "lira-offline"),
    "rmia": ("rmia-online", "rmia-offline"),
    "ltu": ("ltu",),
}
CONFIG_FILE = "config.json"
SCORES_FILE = "scores.parquet"
LEDGER_FILE = "ledger.sqlite"
MIN_PER_CLASS = 4
VULNERABILITY_FPR = 0.01


@dataclass(frozen=True)
class AuditConfig:
    """Everything that defines an audit run (every CLI flag has a field here; serialised to config.json).

    Attributes
    ----------
    data : str or None
        Path of a CSV/Parquet table; ``None`` when arrays are passed to :func:`run_audit`.
    target : str
        Label column of the table.
    model : str
        Import path of the trainer class, e.g. ``"sklearn.neural_network.MLPClassifier"``.
    params : dict
        JSON-able constructor arguments of the trainer.
    attacks : tuple of str
        Subset of ``("loss", "lira", "rmia", "ltu")``.
    n_models : int
        ``K``: models trained in total (even, >= 4); each target is attacked with the other ``K - 1``.
    n_targets : int or None
        ``T``: how many of the models serve in turn as the target; default ``min(K, 8)``.
    seed : int
        Seeds the subsample, the membership matrix, every fit and the cross-fitting.
    backend, address, n_jobs
        Where the fits run (``"local"`` joblib processes or ``"ray"``).
    encode, dropna, drop, max_records
        How the table becomes arrays (see :func:`mipkit.data.io.features_target`); ``max_records`` keeps a
        seeded random subsample of that many records.
    fprs, base_rates
        FPRs for TPR-at-FPR and membership base rates for precision.
    ltu_strategy : {"loss", "retrain"}
        ``"loss"`` plays the LTU game on the audit's own fits; ``"retrain"`` calls
        :func:`mipkit.attacks.ltu.ltu_game` (refits for every round: expensive).
    ltu_rounds : int or None
        Rounds for the ``"retrain"`` strategy (default 50).
    certified_eta : float or None
        A MIP certificate to draw next to the measurement when the trainer does not carry one itself.
    confidence : float
        Confidence level of every interval.
    """

    data: str | None = None
    target: str = ""
    model: str = ""
    params: dict = field(default_factory=dict)
    attacks: tuple[str, ...] = ("loss", "lira", "rmia")
    n_models: int = 16
    n_targets: int | None = None
    seed: int = 0
    backend: str = "local"
    address: str | None = None
    n_jobs: int = -1
    encode: str = "none"
    dropna: bool = False
    drop: tuple[str, ...] = ()
    max_records: int | None = None
    fprs: tuple[float, ...] = DEFAULT_FPRS
    base_rates: tuple[float, ...] = DEFAULT_BASE_RATES
    ltu_strategy: str = "loss"
    ltu_rounds: int | None = None
    certified_eta: float | None = None
    confidence: float = 0.95

    def validate(self) -> AuditConfig:
        """Check every field (clear :class:`MipkitValueError` on bad input) and return a normalised copy."""
        owner = "audit"
        if not self.model:
            raise MipkitValueError(
                "The 'model' parameter of audit is required (an import path of a trainer)."
            )
        attacks = tuple(a.strip().lower() for a in self.attacks if a.strip())
        bad = [a for a in attacks if a not in ATTACK_FAMILIES]
        if bad or not attacks:
            raise MipkitValueError(
                "The 'attacks' parameter of audit must be a non-empty subset "
                f"of {', '.join(ATTACK_FAMILIES)}. "
                f"Got {', '.join(attacks) if attacks else 'nothing'} instead."
            )
        attacks = tuple(a for a in ATTACK_FAMILIES if a in attacks)  # canonical order, no duplicates
        k = self.n_models
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 4 or k % 2:
            raise MipkitValueError(
                f"The 'n_models' parameter of audit must be an even integer >= 4 (each record is IN for half "
                f"of the models). Got {k!r} instead."
            )
        t = min(k, 8) if self.n_targets is None else self.n_targets
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or not 1 <= t <= k:
            raise MipkitValueError(
                "The 'n_targets' parameter of audit must be an integer in "
                f"[1, n_models={k}]. Got {t!r} instead."
            )
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise MipkitValueError(
                f"The 'seed' parameter of audit must be a non-negative integer. Got {self.seed!r}."
            )
        check_choice("backend", self.backend, ("local", "ray"), owner=owner)
        check_choice("encode", self.encode, ("none", "onehot"), owner=owner)
        check_choice("ltu_strategy", self.ltu_strategy, ("loss", "retrain"), owner=owner)
        if self.max_records is not None and (
            not isinstance(self.max_records, (int, np.integer)) or self.max_records < 8
        ):
            raise MipkitValueError(
                "The 'max_records' parameter of audit must be an integer >= "
                f"8. Got {self.max_records!r} instead."
            )
        for f in self.fprs:
            check_interval("fprs", f, 0.0, 1.0, owner=owner)
        for b in self.base_rates:
            check_interval("base_rates", b, 0.0, 1.0, owner=owner)
        if self.certified_eta is not None:
            check_interval("certified_eta", self.certified_eta, 0.0, 0.5, closed="right", owner=owner)
        check_interval("confidence", self.confidence, 0.0, 1.0, owner=owner)
        if not isinstance(self.params, dict):
            raise MipkitValueError(
                f"The 'params' parameter of audit must be a JSON object. Got {self.params!r}."
            )
        return replace(
            self,
            attacks=attacks,
            n_targets=int(t),
            fprs=tuple(float(f) for f in self.fprs),
            base_rates=tuple(float(b) for b in self.base_rates),
            drop=tuple(self.drop),
        )

    def to_dict(self) -> dict:
        return json.loads(json.dumps(asdict(self), default=str))


# ----------------------------------------------------------------------------------------------- data


def load_dataset(config: AuditConfig) -> Dataset:
    """Read and encode the table named by ``config.data``; subsample to ``max_records`` (seeded)."""
    if not config.data:
        raise MipkitValueError("The 'data' parameter of audit is required (a CSV or Parquet file).")
    if not config.target:
        raise MipkitValueError("The 'target' parameter of audit is required (the label column).")
    df = read_table(config.data)
    ds = features_target(df, config.target, encode=config.encode, drop=config.drop, dropna=config.dropna)
    return subsample(ds, config.max_records, seed=config.seed)


def subsample(ds: Dataset, max_records: int | None, *, seed: int) -> Dataset:
    """A seeded random subset of ``max_records`` records (the dataset itself when it is not larger)."""
    if max_records is None or ds.X.shape[0] <= max_records:
        return ds
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x5AB]))
    keep = np.sort(rng.choice(ds.X.shape[0], size=max_records, replace=False))
    return Dataset(X=ds.X[keep], y=ds.y[keep], feature_names=ds.feature_names, classes=ds.classes)


def check_dataset(ds: Dataset) -> None:
    """At least two classes and :data:`MIN_PER_CLASS` records per class."""
    counts = np.bincount(ds.y, minlength=len(ds.classes))
    if counts.size < 2:
        raise MipkitValueError("The target column has a single class; an audit needs at least two.")
    if counts.min() < MIN_PER_CLASS:
        small = [f"{ds.classes[c]!s} ({counts[c]})" for c in np.flatnonzero(counts < MIN_PER_CLASS)]
        raise MipkitValueError(
            f"Every class needs at least {MIN_PER_CLASS} records so that random halves contain it; "
            f"too few for: {', '.join(small[:6])}."
        )


def _data_hash(ds: Dataset) -> str:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(ds.X, dtype=np.float64).tobytes())
    h.update(np.ascontiguousarray(ds.y, dtype=np.int64).tobytes())
    return h.hexdigest()[:16]


# -------------------------------------------------------------------------------------------- attacks


def _certificate(trainer, ds: Dataset, train_idx: np.ndarray, seed: int) -> dict | None:
    """Fit once and read the trainer's ``certificate_`` when its parameters suggest it carries one."""
    est = trainer.build(seed)
    params = est.get_params() if hasattr(est, "get_params") else {}
    hints = {"eta", "target_eta", "epsilon", "noise_multiplier", "certificate"}
    if not (hints & set(params)) and not hasattr(type(est), "certificate_"):
        return None
    est.fit(ds.X[train_idx], ds.y[train_idx])
    cert = getattr(est, "certificate_", None)
    eta = getattr(cert, "eta", None)
    if eta is None:
        return None
    out = {"eta": float(eta), "source": type(est).__name__}
    for key in ("exact", "calibration", "sigma", "scale", "epsilon", "delta"):
        val = getattr(cert, key, None)
        if isinstance(val, (int, float, str, bool, np.floating, np.integer)):
            out[key] = val
    return out


def _ltu_from_losses(
    loss: np.ndarray, in_mask: np.ndarray, targets: np.ndarray, *, rng: np.random.Generator, confidence: float
) -> dict:
    """LTU game with the score strategy (Pedersen 4.2.1) played on the audit's fits.

    For each target model the members and non-members are paired at random (each record at most once);
    in each round the attacker calls the lower-loss record of the pair the member (ties: a seeded coin).
    Accuracy ``A`` over ``N`` rounds gives the global privacy score ``min{2(1 - A), 1} +- 2 sqrt(A(1-A)/N)``.
    """
    correct = 0
    rounds = 0
    for t in targets:
        members = rng.permutation(np.flatnonzero(in_mask[t]))
        others = rng.permutation(np.flatnonzero(~in_mask[t]))
        m = min(members.size, others.size)
        ld, lr = loss[t, members[:m]], loss[t, others[:m]]
        coin = rng.random(m) < 0.5
        correct += int(np.sum((ld < lr) | ((ld == lr) & coin)))
        rounds += m
    from mipkit.attacks.ltu import ltu_privacy

    acc = correct / rounds
    lo, hi = clopper_pearson(correct, rounds, confidence)
    privacy, privacy_error = ltu_privacy(correct, rounds)
    return {
        "game": "ltu",
        "strategy": "loss",
        "accuracy": acc,
        "accuracy_ci": [lo, hi],
        "rounds": rounds,
        "correct": correct,
        "privacy": privacy,
        "privacy_error": privacy_error,
    }


def _ltu_retrain(trainer, ds: Dataset, in_mask: np.ndarray, config: AuditConfig, rng) -> dict:
    from mipkit.attacks.ltu import ltu_game

    res = ltu_game(
        trainer,
        ds.X,
        ds.y,
        defender_idx=np.flatnonzero(in_mask[0]),
        reserve_idx=np.flatnonzero(~in_mask[0]),
        strategy="retrain",
        n_rounds=config.ltu_rounds or 50,
        random_state=int(rng.integers(2**31 - 1)),
        n_jobs=config.n_jobs,
    )
    acc = res.accuracy
    correct, rounds = int(getattr(acc, "successes", 0)), int(getattr(acc, "trials", 0))
    value = float(getattr(acc, "value", acc))
    ci = list(acc.interval(config.confidence)) if hasattr(acc, "interval") else [None, None]
    return {
        "game": "ltu",
        "strategy": "retrain",
        "accuracy": value,
        "accuracy_ci": ci,
        "rounds": rounds,
        "correct": correct,
        "privacy": float(res.privacy),
        "privacy_error": float(res.privacy_error),
    }


def attack_scores(
    probs: np.ndarray,
    y: np.ndarray,
    in_mask: np.ndarray,
    targets: np.ndarray,
    rows: tuple[str, ...],
    *,
    rmia_a: float | None = None,
) -> tuple[dict[str, np.ndarray], dict]:
    """Scores ``(len(targets), n)`` of every attack row, each target attacked with the other models.

    Parameters
    ----------
    probs : array (K, n, C)
        ``predict_proba`` of every model on every record.
    y : array (n,)
    in_mask : bool array (K, n)
    targets : int array
        Models that serve in turn as the target.
    rows : names among ``loss``, ``lira-online``, ``lira-offline``, ``rmia-online``, ``rmia-offline``.
    rmia_a : float, optional
        RMIA's offline ``a``; when ``None`` it is tuned for each target with
        :func:`mipkit.attacks.rmia.tune_rmia_a` on that target's reference models.

    Returns
    -------
    scores : dict name -> array (T, n)
    info : dict of attack settings used (e.g. the tuned ``a``)
    """
    from mipkit.attacks import signals

    K = probs.shape[0]
    out: dict[str, np.ndarray] = {r: np.empty((len(targets), probs.shape[1])) for r in rows}
    info: dict = {}
    need_lira = any(r.startswith("lira") for r in rows)
    need_rmia = any(r.startswith("rmia") for r in rows)
    conf = signals.logit_confidence(probs, y) if need_lira else None
    p_true = signals.true_class_probability(probs, y) if need_rmia else None
    loss = signals.cross_entropy_loss(probs, y) if "loss" in rows else None
    if need_rmia:
        from mipkit.attacks.rmia import rmia_scores, tune_rmia_a

        info["rmia_a"] = {}
        info["rmia_population"] = "every record of the pool (the attacker does not know who is IN)"
    if need_lira:
        from mipkit.attacks.lira import lira_offline, lira_online
    if "loss" in rows:
        from mipkit.attacks.loss import loss_attack
    for j, t in enumerate(targets):
        refs = np.array([k for k in range(K) if k != t])
        if "loss" in rows:
            out["loss"][j] = loss_attack(loss[t])
        if "lira-online" in rows:
            out["lira-online"][j] = lira_online(conf[t], conf[refs], in_mask[refs])
        if "lira-offline" in rows:
            out["lira-offline"][j] = lira_offline(conf[t], conf[refs], in_mask[refs])
        if "rmia-online" in rows:
            out["rmia-online"][j] = rmia_scores(
                p_true[t], p_true[refs], in_mask[refs], p_true[t], p_true[refs], online=True
            )
        if "rmia-offline" in rows:
            a = rmia_a if rmia_a is not None else _tune_a(tune_rmia_a, p_true[refs], in_mask[refs], int(t))
            info["rmia_a"][str(int(t))] = a
            out["rmia-offline"][j] = rmia_scores(
                p_true[t], p_true[refs], in_mask[refs], p_true[t], p_true[refs], a=a, online=False
            )
    for name, arr in out.items():  # attacks may return +-inf for certain records; keep the order, stay finite
        if not np.all(np.isfinite(arr)):
            finite = arr[np.isfinite(arr)]
            hi = finite.max() + 1.0 if finite.size else 1.0
            lo = finite.min() - 1.0 if finite.size else -1.0
            out[name] = np.nan_to_num(arr, nan=lo, posinf=hi, neginf=lo)
    return out, info


def _tune_a(tune_rmia_a, p_ref: np.ndarray, in_ref: np.ndarray, seed: int) -> float:
    """Tune RMIA's offline ``a`` on the target's reference models only (one plays the target), as the
    authors do (Zarifzadeh et al., Sec. 4): the target's own membership never enters."""
    return float(tune_rmia_a(p_ref, in_ref, p_ref, n_targets=1, random_state=seed))


# ------------------------------------------------------------------------------------- per-record table


def vulnerability_table(
    scores: dict[str, np.ndarray],
    summaries: dict[str, AttackSummary],
    in_mask_targets: np.ndarray,
    y: np.ndarray,
    classes: np.ndarray,
) -> pd.DataFrame:
    """One row per record: how exposed it is to each attack, over the target models.

    Columns per attack ``a``: ``a_mean_in`` / ``a_mean_out`` (mean score when the record is a member /
    non-member of the target), ``a_gap`` (their difference in units of the pooled score SD), ``a_hit_rate``
    (fraction of its member trials flagged at the pooled threshold of FPR 1%) and ``a_false_alarm`` (fraction
    of its non-member trials flagged). Rows are sorted by the exposure of the first attack listed.
    """
    n = y.size
    m = in_mask_targets
    df = pd.DataFrame(
        {
            "record": np.arange(n),
            "label": classes[y].astype(str),
            "n_member_trials": m.sum(axis=0),
            "n_nonmember_trials": (~m).sum(axis=0),
        }
    )
    key = fpr_label(VULNERABILITY_FPR)
    for name, s in scores.items():
        summ = summaries[name]
        thr = next((p.threshold for p in summ.tpr_at_fpr if fpr_label(p.target_fpr) == key), None)
        n_in = np.maximum(m.sum(axis=0), 1)
        n_out = np.maximum((~m).sum(axis=0), 1)
        mean_in = np.where(m.any(axis=0), (s * m).sum(axis=0) / n_in, np.nan)
        mean_out = np.where((~m).any(axis=0), (s * ~m).sum(axis=0) / n_out, np.nan)
        sd = float(np.std(s)) or 1.0
        df[f"{name}_mean_in"] = mean_in
        df[f"{name}_mean_out"] = mean_out
        df[f"{name}_gap"] = (mean_in - mean_out) / sd
        if thr is not None and np.isfinite(thr):
            flagged = s >= thr
            df[f"{name}_hit_rate"] = np.where(m.any(axis=0), (flagged & m).sum(axis=0) / n_in, np.nan)
            df[f"{name}_false_alarm"] = np.where((~m).any(axis=0), (flagged & ~m).sum(axis=0) / n_out, np.nan)
    return df


# ------------------------------------------------------------------------------------------- the run


def independent_halves(n_records: int, n_models: int, *, random_state) -> np.ndarray:
    """``in_mask`` (n_models, n_records): each model trains on its own uniformly random half of the records.

    This is the MIP game of Izzo et al. (Def. 1: ``D_train`` a uniformly random subset of size ``n/2``),
    drawn independently for every model. LiRA's exactly balanced design (every record IN for exactly ``K/2``
    models, :func:`mipkit.game.splits.balanced_membership`) is not used here on purpose: with leave-one-out
    over models, a record's number of IN reference models would then be ``K/2 - 1`` when it is a member of
    the target and ``K/2`` when it is not, so the reference set itself would reveal the answer (an attack
    counting IN references is always right, and the reference means shift by one model in ``K - 1``).
    With independent halves the target's membership is independent of the references' (up to the fixed
    half size, an ``O(1/n)`` effect).
    """
    from mipkit.game.splits import random_half

    rng = (
        np.random.default_rng(random_state)
        if not isinstance(random_state, np.random.Generator)
        else random_state
    )
    return np.stack([random_half(n_records, random_state=rng) for _ in range(n_models)])


def _select_strongest(attacks: dict) -> str | None:
    best, best_eta = None, -np.inf
    for name, row in attacks.items():
        eta = row.get("eta")
        if eta is not None and eta > best_eta:
            best, best_eta = name, eta
    return best


def run_audit(
    config: AuditConfig,
    out_dir: str | Path,
    *,
    progress: bool = True,
    dataset: Dataset | None = None,
    write_report: bool = True,
) -> dict:
    """Run the audit described by ``config`` and write the run folder ``out_dir``.

    Parameters
    ----------
    config : AuditConfig
    out_dir : path
        Run folder; created if needed. Running again with the same config resumes from its ledger.
    progress : bool
        Rich progress bars on stderr.
    dataset : Dataset, optional
        Arrays to audit instead of reading ``config.data``.
    write_report : bool
        Also render ``report.html``.

    Returns
    -------
    dict
        The fields written to ``results.json``: ``auc``, ``tpr_at_fpr``, ``eta``, ``eta_ci``,
        ``strongest_attack``, ``attacks`` (name -> metrics), ``utility``, ``certificate``, ``config``, ...
    """
    from mipkit.engine.ledger import Ledger, make_run_key
    from mipkit.engine.runner import FitTask, run_fits
    from mipkit.game.trainers import resolve_trainer

    config = config.validate()
    trainer = resolve_trainer(config.model, config.params)
    ds = dataset if dataset is not None else load_dataset(config)
    if dataset is not None:
        ds = subsample(ds, config.max_records, seed=config.seed)
    check_dataset(ds)
    X, y = ds.X, ds.y
    n = X.shape[0]
    K, T = config.n_models, config.n_targets
    ss = np.random.SeedSequence(config.seed)
    ss_members, ss_fits, ss_eval = ss.spawn(3)
    in_mask = independent_halves(n, K, random_state=np.random.default_rng(ss_members))
    fit_seeds = np.random.default_rng(ss_fits).integers(0, 2**31 - 1, size=K)
    tasks = [FitTask(index=k, train_idx=np.flatnonzero(in_mask[k]), seed=int(fit_seeds[k])) for k in range(K)]

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cfg_dict = config.to_dict()
    data_hash = _data_hash(ds)
    run_key = make_run_key(trainer, X, y, tasks, extra={"workflow": "audit-model-v1"})
    write_json_atomic(out / CONFIG_FILE, {**cfg_dict, "run_key": run_key, "data_sha256_16": data_hash})
    with Ledger(out / LEDGER_FILE, run_key, info={"kind": "audit", "model": config.model}) as ledger:
        probs = run_fits(
            trainer,
            X,
            y,
            tasks,
            ledger=ledger,
            backend=config.backend,
            n_jobs=config.n_jobs,
            address=config.address,
            progress=progress,
        )
    probs = np.asarray(probs, dtype=float)

    targets = np.arange(T)
    rows = tuple(r for fam in config.attacks if fam != "ltu" for r in ATTACK_ROWS[fam])
    eval_rng = np.random.default_rng(ss_eval)
    scores, info = attack_scores(probs, y, in_mask, targets, rows) if rows else ({}, {})
    labels = in_mask[targets]
    groups = np.repeat(targets, n).reshape(T, n)
    summaries = {
        name: summarize_attack(
            s.ravel(),
            labels.ravel().astype(int),
            name=name,
            groups=groups.ravel(),
            fprs=config.fprs,
            base_rates=config.base_rates,
            random_state=eval_rng,
        )
        for name, s in scores.items()
    }
    attacks = {name: summ.to_dict(config.confidence) for name, summ in summaries.items()}
    if "ltu" in config.attacks:
        if config.ltu_strategy == "retrain":
            ltu = _ltu_retrain(trainer, ds, in_mask, config, eval_rng)
        else:
            from mipkit.attacks.signals import cross_entropy_loss

            ltu = _ltu_from_losses(
                cross_entropy_loss(probs, y), in_mask, targets, rng=eval_rng, confidence=config.confidence
            )
        attacks["ltu"] = {
            "auc": None,
            "tpr_at_fpr": None,
            "eta": None,
            "eta_ci": None,
            "balanced_accuracy": None,
            "precision_at_base_rate": None,
            **ltu,
        }

    pred = probs.argmax(axis=2)
    correct = pred == y[None, :]
    utility = {
        "accuracy_nonmembers": float(np.mean([correct[k, ~in_mask[k]].mean() for k in range(K)])),
        "accuracy_members": float(np.mean([correct[k, in_mask[k]].mean() for k in range(K)])),
        "note": "mean over the K models of accuracy on the records each model did not train on (held out) "
        "and on its training records",
    }
    certificate = None
    if config.certified_eta is not None:
        certificate = {"eta": config.certified_eta, "source": "--certified-eta"}
    else:
        certificate = _certificate(trainer, ds, tasks[0].train_idx, tasks[0].seed)

    strongest = _select_strongest(attacks)
    best = attacks.get(strongest, {}) if strongest else {}
    roc_rows = [a for a in attacks.values() if a.get("auc") is not None]
    results = {
        "auc": max((a["auc"] for a in roc_rows), default=None),
        "tpr_at_fpr": {
            fpr_label(f): max((a["tpr_at_fpr"][fpr_label(f)] for a in roc_rows), default=None)
            for f in config.fprs
        },
        "eta": best.get("eta"),
        "eta_ci": best.get("eta_ci"),
        "strongest_attack": strongest,
        "balanced_accuracy": best.get("balanced_accuracy"),
        "attacks": attacks,
        "attack_settings": info,
        "certificate": certificate,
        "utility": utility,
        "game": {
            "n_records": n,
            "n_features": int(X.shape[1]),
            "n_classes": len(ds.classes),
            "n_models": K,
            "n_targets": T,
            "trials": int(T * n),
            "members": int(labels.sum()),
            "protocol": (
                "leave-one-out over models: each target model attacked with "
                "the other K-1 as references; "
                "scores pooled over targets; eta threshold cross-fitted across target models"
            ),
        },
        "trainer": {
            "import_path": config.model,
            "params": config.params,
            "fingerprint": trainer.fingerprint(),
        },
        "config": cfg_dict,
        "notes": [
            "auc and tpr_at_fpr at the top level are the largest over "
            "the attacks; eta and eta_ci are those of "
            "the attack with the largest held-out eta "
            "(strongest_attack), a lower bound on the model's MIP eta.",
            "Intervals treat trials as independent; trials sharing a model or record are not quite, so read "
            "them as indicative.",
        ],
    }
    write_results(out, results, kind="audit")
    vulnerability_table(scores, summaries, labels, y, ds.classes).to_parquet(out / SCORES_FILE, index=False)
    if write_report:
        from mipkit.report import rebuild_report

        rebuild_report(out)
    return results
