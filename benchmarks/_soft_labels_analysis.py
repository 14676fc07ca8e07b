"""The attacks and the statistics of the optimally-soft-labels benchmarks, from the fitted models' outputs.

Per setting: LiRA and RMIA (online) on every defender model against the shadow models, each record's
median ``P_IN``, the LTU game, accuracy, and 95% intervals by a cluster bootstrap over defender models
(``_soft_labels_stats.py``); per setting against hard labels: the differences with their intervals, the
paired t test of the privacy difference, and the TOST of accuracy at ``cfg.accuracy_margin``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict

import numpy as np
from scipy import stats
from scipy.special import expit

from _soft_labels_stats import (
    bootstrap_means,
    model_weights,
    per_model_auc,
    percentile_interval,
    privacy,
    tost_paired,
    weighted_tpr_at_fpr,
)


def lira(conf, sh_conf, shadow_in, global_variance: bool) -> np.ndarray:
    """Online LiRA of every defender model (rows of ``conf``): :func:`mipkit.attacks.lira_online` row by
    row, with the shadow models' Gaussians fitted once."""
    from mipkit.attacks import lira_gaussian_fits

    fits = lira_gaussian_fits(sh_conf, shadow_in, global_variance=global_variance)
    log_in = stats.norm.logpdf(conf, fits.mean_in, np.sqrt(fits.var_in))
    return log_in - stats.norm.logpdf(conf, fits.mean_out, np.sqrt(fits.var_out))


def shadow_jackknife(conf, sh_conf, shadow_in, member, global_variance: bool) -> np.ndarray:
    """LTU privacy (expected over the pairing) with each shadow model left out in turn: ``(K,)``."""
    K = sh_conf.shape[0]
    out = np.empty(K)
    for k in range(K):
        keep = np.arange(K) != k
        scores = lira(conf, sh_conf[keep], shadow_in[keep], global_variance)
        out[k] = privacy(per_model_auc(scores, member).mean())
    return out


def jackknife_se(values: np.ndarray) -> float:
    """Leave-one-out jackknife standard error ``sqrt((K - 1)/K sum (v_k - mean)^2)``."""
    v = np.asarray(values, dtype=float)
    return float(np.sqrt((v.size - 1) / v.size * np.sum((v - v.mean()) ** 2)))


def _attack(conf, p_true, sh_conf, sh_p_true, shadow_in, global_variance: bool):
    from mipkit.attacks import rmia_scores

    scores = lira(conf, sh_conf, shadow_in, global_variance)
    rmia = np.stack([rmia_scores(p, sh_p_true, shadow_in, p, sh_p_true, online=True) for p in p_true])
    return scores, rmia


def chosen_alpha_counts(items: list[dict]) -> dict:
    """How many defender models chose each alpha (``"validate"``) or each tuple of group alphas."""
    keys = [
        f"{it['alpha']:g}" if it["alpha"] is not None else "/".join(f"{a:g}" for a in it["group_alphas"])
        for it in items
    ]
    return dict(sorted(Counter(keys).items(), key=lambda kv: -kv[1]))


def analyse(cfg, data: dict, store: dict, shadow_in: np.ndarray) -> dict:
    """Everything the JSON reports, from the per-model arrays of ``store`` (``_soft_labels.run``)."""
    from mipkit.attacks.ltu import ltu_loss_game

    y, n_def = data["y"], data["n_defender"]
    n_pool = y.size
    T = cfg.n_defenders
    member = np.zeros(n_pool, dtype=bool)
    member[:n_def] = True
    in_def = np.tile(member, (T, 1))
    global_variance = cfg.n_shadows < 16
    W = model_weights(cfg.n_boot, T, np.random.default_rng([cfg.seed, 7]))
    labels = list(store["defender"])
    bins = np.linspace(0, 1, 41)
    per_model, reps, rows, hists, medians, jack = {}, {}, [], {}, {}, {}
    for label in labels:
        d = {k: v[:T] for k, v in store["defender"][label].items()}
        sh = store["shadow"][label]
        lira_, rmia = _attack(d["conf"], d["p_true"], sh["conf"], sh["p_true"], shadow_in, global_variance)
        median_pin = np.median(expit(lira_), axis=0)
        medians[label] = median_pin
        hists[label] = {
            "defender": np.histogram(median_pin[:n_def], bins)[0].tolist(),
            "reserve": np.histogram(median_pin[n_def:], bins)[0].tolist(),
        }
        game = ltu_loss_game(-lira_, in_def, random_state=cfg.seed)
        game_acc = game.per_record.groupby("model")["correct"].mean().to_numpy()
        auc = per_model_auc(lira_, in_def)
        acc = d["test_accuracy"]
        per_model[label] = {"test_accuracy": acc, "ltu_expected_accuracy": auc, "ltu_game_accuracy": game_acc}
        reps[label] = {
            "test_accuracy": bootstrap_means(acc, W),
            "ltu_privacy": privacy(bootstrap_means(auc, W)),
            "ltu_game_privacy": privacy(bootstrap_means(game_acc, W)),
            "lira_tpr": weighted_tpr_at_fpr(lira_, in_def, W, cfg.fpr),
            "rmia_tpr": weighted_tpr_at_fpr(rmia, in_def, W, cfg.fpr),
        }
        ones = np.ones((1, T), dtype=int)
        est = {
            "test_accuracy": float(acc.mean()),
            "ltu_privacy": float(privacy(auc.mean())),
            "ltu_game_privacy": float(privacy(game_acc.mean())),
            "lira_tpr": float(weighted_tpr_at_fpr(lira_, in_def, ones, cfg.fpr)[0]),
            "rmia_tpr": float(weighted_tpr_at_fpr(rmia, in_def, ones, cfg.fpr)[0]),
        }
        kind, value = next((k, v) for lab, k, v in _settings() if lab == label)
        row = {"setting": label, "kind": kind, "value": value, "n_defender_models": T}
        for key, val in est.items():
            row[key] = val
            row[key + "_ci"] = list(percentile_interval(reps[label][key]))
        row["ltu_game_privacy_error_independent_pairs"] = game.privacy_error
        row["test_accuracy_median"] = float(np.median(acc))
        row["test_accuracy_quartiles"] = [float(q) for q in np.quantile(acc, [0.25, 0.75])]
        for name, truth in (("noisy", y), ("clean", data["y_clean"])):
            right = (d["pred"][:, n_def:] == truth[n_def:]).mean(axis=1)
            row[f"reserve_accuracy_{name}_labels_median"] = float(np.median(right))
        row["median_p_in_defender"] = float(np.median(median_pin[:n_def]))
        row["median_p_in_reserve"] = float(np.median(median_pin[n_def:]))
        row["lira_auc_mean_per_model"] = float(np.mean(auc))
        jack[label] = shadow_jackknife(d["conf"], sh["conf"], shadow_in, in_def, global_variance)
        row["ltu_privacy_shadow_jackknife_se"] = jackknife_se(jack[label])
        if isinstance(value, str):  # alpha chosen on a validation split: what each defender model chose
            chosen = store["alphas"][label][:T]
            row["chosen_alpha_counts"] = chosen_alpha_counts(chosen)
            row["chosen_alphas"] = chosen
        rows.append(row)
    _compare(rows, per_model, reps, medians, jack, n_def, cfg.accuracy_margin)
    return {
        "config": asdict(cfg),
        "data": {k: v for k, v in data.items() if k in ("description", "n_defender", "n_test", "flipped")},
        "inference": (
            "95% intervals: percentile cluster bootstrap over defender models "
            f"({cfg.n_boot} replicates, every setting from the same draw), conditional on the data and on "
            f"the attacker's {cfg.n_shadows} shadow models (vs_hard.ltu_privacy.ci_models_and_shadows adds "
            "the leave-one-shadow-out jackknife variance). LTU privacy min{{2(1 - A), 1}} with A the LTU "
            "game's expected accuracy over its random pairing (each defender model's AUC, members against "
            "non-members); ltu_game_privacy is the one game played. Differences are setting minus hard; "
            f"accuracy TOST: paired t, margin {cfg.accuracy_margin}, alpha 0.05 (90% interval inside the "
            "margin)."
        ),
        "settings": rows,
        "per_model": {k: {n: v.tolist() for n, v in d.items()} for k, d in per_model.items()},
        "histograms": {"bins": bins.tolist(), "median_p_in": hists},
        "lira_global_variance": global_variance,
    }


def _compare(rows, per_model, reps, medians, jack, n_def, margin) -> None:
    """Differences from hard labels (with intervals), paired tests, TOST, Mood's median test.

    The privacy difference also gets an interval that lets the attacker's shadow models vary: the
    estimate +- 1.96 sqrt(se_models^2 + se_shadows^2), with se_models the bootstrap SD over defender models
    and se_shadows the leave-one-shadow-out jackknife SE (two independent sources of variation)."""
    hard = per_model["hard"]
    for row in rows:
        label = row["setting"]
        if label == "hard":
            continue
        diff = {}
        for key in ("test_accuracy", "ltu_privacy", "lira_tpr", "rmia_tpr"):
            r = reps[label][key] - reps["hard"][key]
            diff[key] = {"estimate": row[key] - next(x for x in rows if x["setting"] == "hard")[key]}
            diff[key]["ci"] = list(percentile_interval(r))
        d_priv = 2 * (hard["ltu_expected_accuracy"] - per_model[label]["ltu_expected_accuracy"])
        diff["ltu_privacy"]["paired_t_p"] = float(stats.ttest_1samp(d_priv, 0.0).pvalue)
        diff["ltu_privacy"]["sd_per_model"] = float(d_priv.std(ddof=1))
        se_models = float(np.nanstd(reps[label]["ltu_privacy"] - reps["hard"]["ltu_privacy"], ddof=1))
        se_shadows = jackknife_se(jack[label] - jack["hard"])
        half = 1.959964 * float(np.hypot(se_models, se_shadows))
        est = diff["ltu_privacy"]["estimate"]
        diff["ltu_privacy"]["se_models"] = se_models
        diff["ltu_privacy"]["se_shadows_jackknife"] = se_shadows
        diff["ltu_privacy"]["ci_models_and_shadows"] = [est - half, est + half]
        d_acc = per_model[label]["test_accuracy"] - hard["test_accuracy"]
        diff["test_accuracy"]["paired_t_p"] = float(stats.ttest_1samp(d_acc, 0.0).pvalue)
        diff["test_accuracy"]["sd_per_model"] = float(d_acc.std(ddof=1))
        diff["test_accuracy"]["tost"] = tost_paired(d_acc, margin)
        row["vs_hard"] = diff
        res = stats.median_test(medians[label][:n_def], medians["hard"][:n_def])
        row["mood_p_value_vs_hard"] = float(res.pvalue)


def _settings():
    from _soft_labels import SETTINGS, VALIDATED

    return SETTINGS + VALIDATED
