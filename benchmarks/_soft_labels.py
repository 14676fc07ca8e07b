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
  random half of the pool. For every defender model and pool record it fits the IN / OUT Gaussians of the
  logit-scaled confidence over the shadows (LiRA online, Carlini et al. 2022) and reports
  ``P_IN = sigmoid(log-likelihood ratio)``, its posterior probability of membership at prior 1/2
  (thesis eqs. (5.5)-(5.8) with the projection of eq. (5.12)).
- Per setting: test accuracy of every defender model (boxplot), each record's median ``P_IN`` over the
  defender models (histogram, D vs R), Mood's median test of the median ``P_IN`` of D against hard labels,
  the LTU game (each defender model: its members and non-members paired at random, the higher ``P_IN``
  called the member; privacy ``min{2(1 - A), 1}``, thesis eq. (4.9)), and LiRA / RMIA (online) TPR at 1%
  FPR pooled over the defender models.

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
from scipy import stats  # noqa: E402
from scipy.special import expit  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
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
    n_jobs: int = 2
    fpr: float = 0.01


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


def _fit_chunk(cfg: dict, settings: list, X, y, subsets, seeds, X_test) -> dict:
    """Fit every setting's models for one chunk of (subset, seed) pairs; return their probabilities."""
    from threadpoolctl import threadpool_limits

    from mipkit.defences import LabelSmoothing, OptimallySoftLabels, resolve_base
    from mipkit.game.trainers import predict_full_proba
    from mipkit.trainers import fit_many

    n_classes = int(y.max()) + 1
    out: dict = {"probs": {}, "test": {}, "seconds": {}, "alphas": {}}

    def keep(label, models, seconds):
        out["probs"][label] = np.stack([predict_full_proba(m, X, n_classes) for m in models])
        out["test"][label] = np.stack([predict_full_proba(m, X_test, n_classes) for m in models])
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


def _chunks(n: int, k: int) -> list[np.ndarray]:
    return [np.arange(j, n, k) for j in range(k) if j < n]


def run(cfg: Config, data: dict) -> dict:
    """Fit everything, attack every defender model, summarise. ``data`` holds ``X`` (pool, 2n rows, D first),
    ``y`` (noisy labels), ``y_clean``, ``n_defender``, ``X_test``, ``y_test`` (clean)."""
    from joblib import Parallel, delayed

    from mipkit.attacks import lira_online, logit_confidence, rmia_scores, true_class_probability
    from mipkit.attacks.ltu import ltu_loss_game
    from mipkit.metrics.roc import roc_auc, tpr_at_fpr
    from mipkit.stats import Proportion

    X, y, X_test, y_test = data["X"], data["y"], data["X_test"], data["y_test"]
    n_pool, n_def = X.shape[0], data["n_defender"]
    settings = SETTINGS + (VALIDATED if cfg.validated else [])
    rng = np.random.default_rng(cfg.seed)
    def_seeds = [int(s) for s in rng.integers(0, 2**31 - 1, size=cfg.n_defenders)]
    shadow_seeds = [int(s) for s in rng.integers(0, 2**31 - 1, size=cfg.n_shadows)]
    shadow_in = np.stack([rng.permutation(n_pool) < n_pool // 2 for _ in range(cfg.n_shadows)])
    subsets = [np.arange(n_def)] * cfg.n_defenders + [np.flatnonzero(m) for m in shadow_in]
    seeds = def_seeds + shadow_seeds
    M = len(subsets)

    start = time.perf_counter()
    speed = speed_check(cfg, X, y, np.arange(n_def))
    print(
        f"speed: vectorised {speed['vectorised_fits_per_s']:.2f} fits/s, one at a time "
        f"{speed['one_at_a_time_fits_per_s']:.2f} fits/s (wall x{speed['ratio_wall']:.1f}, "
        f"CPU time x{speed['ratio_cpu']:.1f})",
        flush=True,
    )
    fit_start = time.perf_counter()
    chunks = _chunks(M, max(1, cfg.n_jobs))
    parts = Parallel(n_jobs=len(chunks), backend="loky")(
        delayed(_fit_chunk)(
            asdict(cfg), settings, X, y, [subsets[i] for i in c], [seeds[i] for i in c], X_test
        )
        for c in chunks
    )
    fit_seconds = time.perf_counter() - fit_start
    print(f"fitted {M} models x {len(settings)} settings in {fit_seconds:.0f} s", flush=True)

    def gather(key, label):
        arr = np.empty((M, *parts[0][key][label].shape[1:]))
        for c, part in zip(chunks, parts, strict=True):
            arr[c] = part[key][label]
        return arr

    def gather_list(label):
        out = [None] * M
        for c, part in zip(chunks, parts, strict=True):
            for i, item in zip(c, part["alphas"][label], strict=True):
                out[i] = item
        return out

    member = np.zeros(n_pool, dtype=bool)
    member[:n_def] = True
    in_def = np.tile(member, (cfg.n_defenders, 1))
    targets = np.arange(cfg.n_defenders)
    shadows = np.arange(cfg.n_defenders, M)
    global_variance = cfg.n_shadows < 16
    rows, hists, acc_all, medians = [], {}, {}, {}
    bins = np.linspace(0, 1, 41)
    for label, kind, value in settings:
        probs, test = gather("probs", label), gather("test", label)
        conf = logit_confidence(probs, y)
        p_true = true_class_probability(probs, y)
        lira = np.stack(
            [lira_online(conf[t], conf[shadows], shadow_in, global_variance=global_variance) for t in targets]
        )
        rmia = np.stack(
            [
                rmia_scores(p_true[t], p_true[shadows], shadow_in, p_true[t], p_true[shadows], online=True)
                for t in targets
            ]
        )
        p_in = expit(lira)
        median_pin = np.median(p_in, axis=0)
        ltu = ltu_loss_game(-lira, in_def, random_state=cfg.seed)
        labels = in_def.ravel().astype(int)
        tpr = {}
        for name, score in (("lira", lira), ("rmia", rmia)):
            t = float(tpr_at_fpr(score.ravel(), labels, cfg.fpr)[0])
            k = labels.sum()
            tpr[name] = {
                "tpr": t,
                "tpr_ci": list(Proportion(int(round(t * k)), int(k)).interval()),
                "auc": float(roc_auc(score.ravel(), labels)),
            }
        acc = (test[targets].argmax(axis=2) == y_test[None, :]).mean(axis=1)
        acc_reserve_noisy = (probs[targets][:, n_def:].argmax(axis=2) == y[None, n_def:]).mean(axis=1)
        acc_reserve_clean = (probs[targets][:, n_def:].argmax(axis=2) == data["y_clean"][None, n_def:]).mean(
            1
        )
        acc_all[label] = acc
        medians[label] = median_pin
        hists[label] = {
            "defender": np.histogram(median_pin[:n_def], bins)[0].tolist(),
            "reserve": np.histogram(median_pin[n_def:], bins)[0].tolist(),
        }
        row = {
            "setting": label,
            "kind": kind,
            "value": value,
            "test_accuracy_median": float(np.median(acc)),
            "test_accuracy_mean": float(np.mean(acc)),
            "test_accuracy_quartiles": [float(q) for q in np.quantile(acc, [0.25, 0.75])],
            "reserve_accuracy_noisy_labels_median": float(np.median(acc_reserve_noisy)),
            "reserve_accuracy_clean_labels_median": float(np.median(acc_reserve_clean)),
            "median_p_in_defender": float(np.median(median_pin[:n_def])),
            "median_p_in_reserve": float(np.median(median_pin[n_def:])),
            "max_median_p_in_defender": float(np.max(median_pin[:n_def])),
            "ltu_accuracy": ltu.accuracy.value,
            "ltu_accuracy_ci": list(ltu.accuracy.interval()),
            "ltu_privacy": ltu.privacy,
            "ltu_privacy_error": ltu.privacy_error,
            "lira_tpr_at_fpr": tpr["lira"]["tpr"],
            "lira_tpr_at_fpr_ci": tpr["lira"]["tpr_ci"],
            "lira_auc": tpr["lira"]["auc"],
            "rmia_tpr_at_fpr": tpr["rmia"]["tpr"],
            "rmia_tpr_at_fpr_ci": tpr["rmia"]["tpr_ci"],
            "rmia_auc": tpr["rmia"]["auc"],
            "fit_seconds_per_worker": float(np.mean([p["seconds"][label] for p in parts])),
        }
        if isinstance(value, str):  # alpha chosen on a validation split: what each defender model chose
            chosen = gather_list(label)
            row["chosen_alphas"] = chosen[: cfg.n_defenders]
        rows.append(row)
    hard = medians["hard"][:n_def]
    for row in rows:
        if row["setting"] == "hard":
            row["mood_p_value_vs_hard"] = None
            continue
        res = stats.median_test(medians[row["setting"]][:n_def], hard)
        row["mood_p_value_vs_hard"] = float(res.pvalue)
        row["mood_statistic"] = float(res.statistic)
        mw = stats.mannwhitneyu(acc_all[row["setting"]], acc_all["hard"])
        row["accuracy_mannwhitney_p_vs_hard"] = float(mw.pvalue)
    pareto = _pareto([(r["test_accuracy_mean"], r["ltu_privacy"]) for r in rows])
    for row, flag in zip(rows, pareto, strict=True):
        row["pareto_optimal"] = flag
    total = time.perf_counter() - start
    return {
        "config": asdict(cfg),
        "data": {k: v for k, v in data.items() if k in ("description", "n_defender", "n_test", "flipped")},
        "settings": rows,
        "histograms": {"bins": bins.tolist(), "median_p_in": hists},
        "accuracy": {k: v.tolist() for k, v in acc_all.items()},
        "speed": speed,
        "fit_seconds": fit_seconds,
        "total_seconds": total,
        "lira_global_variance": global_variance,
    }


def _pareto(points: list[tuple[float, float]]) -> list[bool]:
    """True for points no other point beats on both coordinates (>= on both, > on one)."""
    out = []
    for i, (a, b) in enumerate(points):
        dominated = any((c >= a and d >= b and (c > a or d > b)) for j, (c, d) in enumerate(points) if j != i)
        out.append(not dominated)
    return out


def target_agreement(cfg: Config, data: dict, alphas=(0.0, 0.25, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0)) -> dict:
    """Thesis Fig. 5.10 on D: how often the argmax of the optimally soft target is the given (noisy) label and
    the clean label, per alpha (one defender seed)."""
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
        top = optimally_soft_targets(stats_, y, a).argmax(axis=1)
        out.append(
            {
                "alpha": a,
                "matches_given_label": float(np.mean(top == y)),
                "matches_clean_label": float(np.mean(top == clean)),
                "flipped_matches_clean_label": (
                    float(np.mean(top[flipped] == clean[flipped])) if flipped.any() else None
                ),
            }
        )
    return {"n_flipped": int(flipped.sum()), "rows": out}


def print_table(result: dict) -> str:
    head = (
        "| setting | test acc. median [IQR] | LTU privacy (eq. 4.9) | median P_IN (D) | Mood p vs hard | "
        "LiRA TPR@1% | RMIA TPR@1% | Pareto |"
    )
    lines = [head, "|" + " --- |" * 8]
    for r in result["settings"]:
        q = r["test_accuracy_quartiles"]
        mood = "" if r["mood_p_value_vs_hard"] is None else f"{r['mood_p_value_vs_hard']:.2g}"
        lines.append(
            f"| {r['setting']} | {r['test_accuracy_median']:.3f} [{q[0]:.3f}, {q[1]:.3f}] | "
            f"{r['ltu_privacy']:.3f} +- {r['ltu_privacy_error']:.3f} | {r['median_p_in_defender']:.4f} | "
            f"{mood} | {r['lira_tpr_at_fpr']:.4f} | {r['rmia_tpr_at_fpr']:.4f} | "
            f"{'yes' if r['pareto_optimal'] else ''} |"
        )
    table = "\n".join(lines)
    print(table, flush=True)
    return table


def save(result: dict, stem: str, title: str) -> None:
    """``<stem>.json``, ``<stem>.csv`` and the figures ``<stem>.png`` / ``<stem>_p_in_histograms.png``."""
    import pandas as pd

    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{stem}.json").write_text(json.dumps(result, indent=2, default=float))
    flat = [
        {
            k: (json.dumps(v) if isinstance(v, (list, dict)) else v)
            for k, v in r.items()
            if k != "chosen_alphas"
        }
        for r in result["settings"]
    ]
    pd.DataFrame(flat).to_csv(RESULTS / f"{stem}.csv", index=False)
    _figures(result, stem, title)
    print(f"wrote {RESULTS / stem}.{{json,csv,png}} and {stem}_p_in_histograms.png", flush=True)


def _figures(result: dict, stem: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["settings"]
    names = [r["setting"] for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(17, 5))
    ax = axes[0]
    ax.boxplot([result["accuracy"][n] for n in names], showfliers=True)
    ax.set_xticks(range(1, len(names) + 1), names, rotation=60, ha="right")
    ax.set_ylabel("test accuracy (held-out, clean labels)")
    ax.set_title(f"utility over {result['config']['n_defenders']} defender models")
    ax = axes[1]
    for r in rows:
        colour = "k" if r["kind"] == "hard" else ("tab:orange" if r["kind"] == "smooth" else "tab:blue")
        ax.errorbar(
            r["test_accuracy_mean"], r["ltu_privacy"], yerr=r["ltu_privacy_error"], fmt="o", color=colour
        )
        ax.annotate(
            r["setting"],
            (r["test_accuracy_mean"], r["ltu_privacy"]),
            fontsize=8,
            xytext=(4, 3),
            textcoords="offset points",
        )
    front = sorted((r["test_accuracy_mean"], r["ltu_privacy"]) for r in rows if r["pareto_optimal"])
    ax.plot(*zip(*front, strict=True), "--", color="grey", lw=1)
    ax.set_xlabel("mean test accuracy")
    ax.set_ylabel("LTU privacy min{2(1-A), 1}")
    ax.set_title("privacy vs utility (thesis Fig. 5.12); dashed: Pareto front")
    ax = axes[2]
    x = np.arange(len(names))
    for off, key, lab in ((-0.2, "lira_tpr_at_fpr", "LiRA"), (0.2, "rmia_tpr_at_fpr", "RMIA")):
        vals = [r[key] for r in rows]
        ci = np.array([r[key + "_ci"] for r in rows]).T
        ax.bar(x + off, vals, width=0.4, label=lab, yerr=[np.subtract(vals, ci[0]), np.subtract(ci[1], vals)])
    ax.axhline(result["config"]["fpr"], color="grey", ls=":", lw=1, label="chance")
    ax.set_xticks(x, names, rotation=60, ha="right")
    ax.set_ylabel(f"TPR at {result['config']['fpr']:.0%} FPR (pooled over defender models)")
    ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(RESULTS / f"{stem}.png", dpi=110)
    plt.close(fig)

    bins = np.array(result["histograms"]["bins"])
    hist = result["histograms"]["median_p_in"]
    cols = 4
    nrows = int(np.ceil(len(names) / cols))
    fig, axes = plt.subplots(nrows, cols, figsize=(4 * cols, 2.8 * nrows), sharex=True, squeeze=False)
    for ax, r in zip(axes.ravel(), rows, strict=False):
        for part, colour in (("defender", "tab:red"), ("reserve", "tab:blue")):
            ax.stairs(hist[r["setting"]][part], bins, color=colour, label=part)
        mood = "" if r["mood_p_value_vs_hard"] is None else f", Mood p={r['mood_p_value_vs_hard']:.2g}"
        ax.set_title(f"{r['setting']}: median {r['median_p_in_defender']:.3f}{mood}", fontsize=9)
        ax.axvline(0.5, color="grey", lw=0.8)
    for ax in axes.ravel()[len(rows) :]:
        ax.axis("off")
    axes[0, 0].legend(fontsize=8)
    fig.supxlabel("median over defender models of the LTU attacker's P_IN")
    fig.suptitle(title + " - thesis Fig. 5.2")
    fig.tight_layout()
    fig.savefig(RESULTS / f"{stem}_p_in_histograms.png", dpi=110)
    plt.close(fig)
