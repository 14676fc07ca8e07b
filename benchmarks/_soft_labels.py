"""The optimally-soft-labels experiment of Pedersen's thesis (ch. 5.4-5.5), shared by the digits and the
tabular benchmark scripts.

Design (thesis ch. 5.4, scaled to the data we have):

- A pool of ``2 n`` records: the defender set ``D`` (first ``n``) and the reserve ``R`` (the thesis's test
  set); a further held-out set with clean labels measures utility. A fraction of the labels of ``D`` and of
  ``R`` is flipped *in pairs* (two records with different labels exchange them), so class counts stay
  exactly as they were.
- Settings: hard labels, label smoothing ``a``, optimally soft labels ``alpha`` (and, optionally, alpha chosen
  on a validation split, globally or per group of samples).
- Defender: ``n_defenders`` models per setting, all on ``D``, each with its own seed (the same seeds in
  every setting).
- Attacker (LTU attacker of ch. 5, who replays the whole procedure): ``n_shadows`` shadow models per
  setting, each the *full* training procedure of that setting (inner splits included) on an independent
  random half of the pool (the same shadow subsets and seeds in every setting). For every defender model and
  pool record it fits the IN / OUT Gaussians of the
  logit-scaled confidence over the shadows (LiRA online, Carlini et al. 2022) and reports
  ``P_IN = sigmoid(log-likelihood ratio)``, its posterior probability of membership at prior 1/2
  (thesis eqs. (5.5)-(5.8) with the projection of eq. (5.12)).
- Per setting (``_soft_labels_analysis.py``): test accuracy of every defender model, each record's median
  ``P_IN`` over the defender models (histogram, D vs R; Mood's median test of D against hard labels), the
  LTU game (each defender model: its members and non-members paired, the higher ``P_IN`` called the member;
  privacy ``min{2(1 - A), 1}``, thesis eq. (4.9)) with ``A`` the game's expected accuracy over the random
  pairing (each model's AUC), LiRA / RMIA (online) TPR at 1% FPR pooled over the defender models, each with
  a 95% cluster-bootstrap interval over defender models (``_soft_labels_stats.py``), the differences from
  hard labels with their intervals, and an equivalence test (TOST) of accuracy against hard labels.

The fits are written to ``<stem>_fits.npz`` (not committed) after the shadow models and after every batch of
defender models, so a run that stops resumes where it stopped; the analysis reads only that file.

Every model of a setting is fitted through :func:`mipkit.trainers.fit_many` /
:meth:`mipkit.defences.OptimallySoftLabels.fit_alphas`: the same models as fitting each alone (tests in
``tests/defences``), vectorised over models; the models are spread over ``n_jobs`` worker processes.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one thread per worker: the workers run in parallel processes

import numpy as np  # noqa: E402

from _soft_labels_report import RESULTS, print_table, save  # noqa: E402

DP_MLP = {
    "hidden_layer_sizes": [128, 64, 32],
    "epochs": 6,
    "learning_rate": 0.05,
    "batch_size": 20,
    "weight_decay": 0.02,
    "noise_multiplier": 0.5,
    "max_grad_norm": 3.0,
}
"""The thesis's DP-SGD baseline (ch. 5.4): noise 0.5, clip 3, lr 0.05, batch 20, 6 epochs; hidden layers
512/256/128 for 1,280 inputs scaled to 128/64/32; Keras's L2 of 0.01 (gradient 0.02 w) as weight decay."""
LOGISTIC = {"C": 1.0}
"""The NumPy/SciPy base (no torch): multinomial logistic regression, scikit-learn's default C."""
__all__ = ["RESULTS", "Config", "flip_in_pairs", "print_table", "run", "save", "target_agreement"]
INNER = {"epochs": 12}
"""The thesis's inner (leave-out) models train for 12 epochs."""
SETTINGS = [
    ("hard", "hard", None),
    ("smooth 0.5", "smooth", 0.5),
    ("smooth 0.7", "smooth", 0.7),
    ("smooth 0.9", "smooth", 0.9),
    ("OSL 0", "osl", 0.0),
    ("OSL 0.25", "osl", 0.25),
    ("OSL 0.5", "osl", 0.5),
    ("OSL 1", "osl", 1.0),
]
VALIDATED = [("OSL validated", "osl", "validate"), ("OSL per-sample", "osl", "per-sample")]


@dataclass
class Config:
    """Everything that defines a run (written to the JSON)."""

    name: str
    n_defenders: int = 50
    n_shadows: int = 32
    n_splits: int = 25
    base: str = "mlp"
    base_params: dict = field(default_factory=lambda: dict(DP_MLP))
    inner_params: dict = field(default_factory=lambda: dict(INNER))
    alpha_grid: tuple = (0.0, 0.25, 0.5, 1.0, 2.0)
    n_alpha_groups: int = 3
    validated: bool = True
    seed: int = 0
    model_seed: int | None = None
    """Seed of the model seeds and shadow subsets (None: ``seed``); the data split always uses ``seed``."""
    n_jobs: int = 2
    fpr: float = 0.01
    accuracy_margin: float = 0.01
    """Equivalence margin of the TOST of test accuracy against hard labels (1 point)."""
    n_boot: int = 2000
    batch: int = 16
    """Defender models fitted between two writes of the fits file."""
    budget_s: float | None = None
    """Start no batch of defender models after this many seconds (the run stops on time, not on results)."""


def flip_in_pairs(y: np.ndarray, rows: np.ndarray, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """Exchange the labels of ``round(fraction * len(rows) / 2)`` random pairs of ``rows`` with different
    labels (thesis ch. 5.4): a ``fraction`` of the labels change and every class keeps its count."""
    y = y.copy()
    pool = list(rng.permutation(rows))
    for _ in range(int(round(fraction * len(rows) / 2))):
        a = pool.pop(0)
        j = next(k for k, b in enumerate(pool) if y[b] != y[a])
        b = pool.pop(j)
        y[a], y[b] = y[b], y[a]
    return y


def _fit_chunk(cfg: dict, settings: list, X, y, subsets, seeds, X_test, y_test) -> dict:
    """Fit every setting's models for one chunk of (subset, seed) pairs; return what the analysis needs of
    each model: its logit-scaled confidence and true-class probability on the pool, its predicted class on
    the pool, its test accuracy, and (alpha validated) the alphas it chose."""
    from threadpoolctl import threadpool_limits

    from mipkit.attacks import logit_confidence, true_class_probability
    from mipkit.defences import LabelSmoothing, OptimallySoftLabels, resolve_base
    from mipkit.game.trainers import predict_full_proba
    from mipkit.trainers import fit_many

    n_classes = int(y.max()) + 1
    out: dict = {"fits": {}, "seconds": {}, "alphas": {}}

    def keep(label, models, seconds):
        probs = np.stack([predict_full_proba(m, X, n_classes) for m in models])
        test = np.stack([predict_full_proba(m, X_test, n_classes) for m in models])
        out["fits"][label] = {
            "conf": logit_confidence(probs, y),
            "p_true": true_class_probability(probs, y),
            "pred": probs.argmax(axis=2).astype(np.int16),
            "test_accuracy": (test.argmax(axis=2) == y_test[None, :]).mean(axis=1),
        }
        out["seconds"][label] = seconds

    with threadpool_limits(limits=1):
        base = resolve_base(cfg["base"], cfg["base_params"], "benchmark")
        for label, kind, value in settings:
            if kind == "hard":
                start = time.perf_counter()
                keep(label, fit_many(base, X, y, subsets, seeds), time.perf_counter() - start)
            elif kind == "smooth":
                start = time.perf_counter()
                est = LabelSmoothing(cfg["base"], a=value, base_params=cfg["base_params"])
                keep(label, fit_many(est, X, y, subsets, seeds), time.perf_counter() - start)
        osl = [(label, value) for label, kind, value in settings if kind == "osl"]
        if osl:
            start = time.perf_counter()
            est = OptimallySoftLabels(
                cfg["base"],
                base_params=cfg["base_params"],
                inner_params=cfg["inner_params"],
                n_splits=cfg["n_splits"],
                alpha_grid=cfg["alpha_grid"],
                n_alpha_groups=cfg["n_alpha_groups"],
            )
            fitted = est.fit_alphas(X, y, subsets, seeds, [v for _, v in osl])
            seconds = (time.perf_counter() - start) / len(osl)  # shared inner fits: split evenly
            for (label, _), models in zip(osl, fitted, strict=True):
                keep(label, models, seconds)
                out["alphas"][label] = [
                    {
                        "alpha": m.alpha_,
                        "group_alphas": None if m.group_alphas_ is None else m.group_alphas_.tolist(),
                    }
                    for m in models
                ]
    return out


def speed_check(cfg: Config, X, y, rows, n_models: int = 16) -> dict:
    """fits/s of the vectorised trainer against one-at-a-time fits of the same inner models (same run)."""
    from mipkit.defences import resolve_base
    from mipkit.trainers import fit_many, with_seed

    rng = np.random.default_rng(cfg.seed + 99)
    subsets = [np.sort(rng.choice(rows, rows.size // 2, replace=False)) for _ in range(n_models)]
    seeds = [int(s) for s in rng.integers(0, 2**31 - 1, size=n_models)]
    base = resolve_base(cfg.base, {**cfg.base_params, **cfg.inner_params}, "benchmark")
    fit_many(base, X, y, subsets[:2], seeds[:2])  # warm-up: imports and first calls are not timed
    t0, c0 = time.perf_counter(), time.process_time()
    many = fit_many(base, X, y, subsets, seeds)
    t1, c1 = time.perf_counter(), time.process_time()
    alone = [with_seed(base, s).fit(X[r], y[r]) for r, s in zip(subsets, seeds, strict=True)]
    t2, c2 = time.perf_counter(), time.process_time()
    diff = max(
        float(np.max(np.abs(a.predict_proba(X) - b.predict_proba(X))))
        for a, b in zip(many, alone, strict=True)
    )
    return {
        "models": n_models,
        "trainer": f"{cfg.base} {dict(cfg.base_params, **cfg.inner_params)} on {rows.size // 2} rows",
        "vectorised_fits_per_s": n_models / (t1 - t0),
        "one_at_a_time_fits_per_s": n_models / (t2 - t1),
        "ratio_wall": (t2 - t1) / (t1 - t0),
        "ratio_cpu": (c2 - c1) / (c1 - c0),
        "max_abs_probability_difference": diff,
    }


def draws(cfg: Config, n_pool: int) -> dict:
    """Shadow subsets and seeds, then defender seeds (the first ``k`` of ``n`` do not depend on ``n``)."""
    seed = cfg.seed if cfg.model_seed is None else cfg.model_seed
    rng = np.random.default_rng(seed)
    shadow_seeds = [int(s) for s in rng.integers(0, 2**31 - 1, size=cfg.n_shadows)]
    shadow_in = np.stack([rng.permutation(n_pool) < n_pool // 2 for _ in range(cfg.n_shadows)])
    def_rng = np.random.default_rng([seed, 1])
    def_seeds = [int(def_rng.integers(0, 2**31 - 1)) for _ in range(cfg.n_defenders)]
    return {"shadow_seeds": shadow_seeds, "shadow_in": shadow_in, "defender_seeds": def_seeds}


def _fit(cfg: Config, data: dict, settings: list, subsets: list, seeds: list) -> tuple[dict, dict]:
    """Fit ``subsets`` x ``settings`` over ``cfg.n_jobs`` workers; the per-model arrays in input order."""
    from joblib import Parallel, delayed

    k = max(1, min(cfg.n_jobs, len(subsets)))
    chunks = [np.arange(j, len(subsets), k) for j in range(k)]
    parts = Parallel(n_jobs=k, backend="loky")(
        delayed(_fit_chunk)(
            asdict(cfg),
            settings,
            data["X"],
            data["y"],
            [subsets[i] for i in c],
            [seeds[i] for i in c],
            data["X_test"],
            data["y_test"],
        )
        for c in chunks
    )
    fits: dict = {}
    alphas: dict = {}
    for label, *_ in settings:
        fits[label] = {}
        for key, first in parts[0]["fits"][label].items():
            arr = np.empty((len(subsets), *first.shape[1:]), dtype=first.dtype)
            for c, part in zip(chunks, parts, strict=True):
                arr[c] = part["fits"][label][key]
            fits[label][key] = arr
        if label in parts[0]["alphas"]:
            alphas[label] = [None] * len(subsets)
            for c, part in zip(chunks, parts, strict=True):
                for i, item in zip(c, part["alphas"][label], strict=True):
                    alphas[label][i] = item
    return fits, alphas


def _fingerprint(cfg: Config, data: dict) -> str:
    skip = ("n_defenders", "n_jobs", "n_boot", "batch", "budget_s")
    keep = {k: v for k, v in asdict(cfg).items() if k not in skip}
    return json.dumps({"config": keep, "data": data["description"], "n_pool": int(data["X"].shape[0])})


def _load(path: Path | None, fingerprint: str) -> dict | None:
    if path is None or not path.is_file():
        return None
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        if meta["fingerprint"] != fingerprint:
            print(f"{path.name}: another configuration; starting afresh", flush=True)
            return None
        store: dict = {"shadow": {}, "defender": {}, "alphas": meta["alphas"], "seconds": meta["seconds"]}
        for key in z.files:
            if key != "meta":
                part, label, name = key.split("|")
                store[part].setdefault(label, {})[name] = z[key]
    return store


def _write(path: Path | None, fingerprint: str, store: dict) -> None:
    if path is None:
        return
    arrays = {
        f"{part}|{label}|{name}": arr
        for part in ("shadow", "defender")
        for label, d in store[part].items()
        for name, arr in d.items()
    }
    meta = {"fingerprint": fingerprint, "alphas": store["alphas"], "seconds": store["seconds"]}
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, meta=np.array(json.dumps(meta)), **arrays)
    tmp.replace(path)


def run(cfg: Config, data: dict, fits_path: Path | None = None) -> dict:
    """Fit everything (resuming from ``fits_path`` when it holds part of this configuration), attack every
    defender model, summarise. ``data`` holds ``X`` (pool, 2n rows, D first), ``y`` (noisy labels),
    ``y_clean``, ``n_defender``, ``X_test``, ``y_test`` (clean)."""
    from _soft_labels_analysis import analyse

    n_pool, n_def = data["X"].shape[0], data["n_defender"]
    settings = SETTINGS + (VALIDATED if cfg.validated else [])
    drawn = draws(cfg, n_pool)
    start = time.perf_counter()
    speed = speed_check(cfg, data["X"], data["y"], np.arange(n_def))
    print(
        f"speed: vectorised {speed['vectorised_fits_per_s']:.2f} fits/s, one at a time "
        f"{speed['one_at_a_time_fits_per_s']:.2f} fits/s (wall x{speed['ratio_wall']:.1f}, "
        f"CPU time x{speed['ratio_cpu']:.1f})",
        flush=True,
    )
    fingerprint = _fingerprint(cfg, data)
    store = _load(fits_path, fingerprint) or {"shadow": {}, "defender": {}, "alphas": {}, "seconds": {}}
    if not store["shadow"]:
        t0 = time.perf_counter()
        subsets = [np.flatnonzero(m) for m in drawn["shadow_in"]]
        store["shadow"], _ = _fit(cfg, data, settings, subsets, drawn["shadow_seeds"])
        store["seconds"]["shadow"] = time.perf_counter() - t0
        _write(fits_path, fingerprint, store)
        print(f"fitted {cfg.n_shadows} shadow models x {len(settings)} settings", flush=True)
    done = len(store["defender"]["hard"]["test_accuracy"]) if store["defender"] else 0
    planned = cfg.n_defenders
    while done < cfg.n_defenders:
        if cfg.budget_s is not None and time.perf_counter() - start > cfg.budget_s:
            print(f"time budget spent: {done} of {cfg.n_defenders} defender models", flush=True)
            cfg.n_defenders = done
            break
        t0 = time.perf_counter()
        batch = range(done, min(done + cfg.batch, cfg.n_defenders))
        seeds = [drawn["defender_seeds"][i] for i in batch]
        fits, alphas = _fit(cfg, data, settings, [np.arange(n_def)] * len(seeds), seeds)
        for label, d in fits.items():
            old = store["defender"].setdefault(label, {})
            for name, arr in d.items():
                old[name] = arr if name not in old else np.concatenate([old[name], arr])
        for label, items in alphas.items():
            store["alphas"][label] = store["alphas"].get(label, []) + items
        store["seconds"]["defenders"] = store["seconds"].get("defenders", 0.0) + time.perf_counter() - t0
        done = batch.stop
        _write(fits_path, fingerprint, store)
        elapsed = time.perf_counter() - start
        print(f"fitted {done} / {cfg.n_defenders} defender models ({elapsed:.0f} s)", flush=True)
    result = analyse(cfg, data, store, drawn["shadow_in"])
    result["n_defenders_planned"] = planned
    result["speed"] = speed
    result["fit_seconds"] = dict(store["seconds"])
    result["total_seconds"] = time.perf_counter() - start
    return result


def target_agreement(cfg: Config, data: dict, alphas=(0.0, 0.25, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0)) -> dict:
    """Thesis Fig. 5.10 on D: how often the argmax of the optimally soft target is the given (noisy) label and
    the clean label, and the mass the target puts on the given label (1 for a hard label; one minus it is the
    total-variation distance from the hard label), per alpha (one defender seed)."""
    from mipkit.defences import OptimallySoftLabels, optimally_soft_targets

    n_def = data["n_defender"]
    X, y, clean = data["X"][:n_def], data["y"][:n_def], data["y_clean"][:n_def]
    est = OptimallySoftLabels(
        cfg.base,
        base_params=cfg.base_params,
        inner_params=cfg.inner_params,
        n_splits=cfg.n_splits,
        random_state=cfg.seed,
    )
    stats_ = est.leave_out_statistics(X, y)
    flipped = y != clean
    out = []
    for a in alphas:
        target = optimally_soft_targets(stats_, y, a)
        top = target.argmax(axis=1)
        on_given = target[np.arange(y.size), y]
        out.append(
            {
                "alpha": a,
                "matches_given_label": float(np.mean(top == y)),
                "matches_clean_label": float(np.mean(top == clean)),
                "target_on_given_label_mean": float(np.mean(on_given)),
                "target_on_given_label_quartiles": [float(q) for q in np.quantile(on_given, [0.25, 0.75])],
                "flipped_matches_clean_label": (
                    float(np.mean(top[flipped] == clean[flipped])) if flipped.any() else None
                ),
            }
        )
    return {"n_flipped": int(flipped.sum()), "rows": out}
