"""What ``make_readme.py`` knows about individual results: who writes them, their commands, their headlines.

:data:`HEADLINES` maps a result name (or a prefix of names, the longest one applying) to a function of its
JSON that returns the few figures the README shows; :data:`COMMANDS` gives the command of a result whose JSON
records none and which its script's documented command does not make; :data:`ALSO_WRITES` the results whose
names do not start with the name of the script that writes them.
"""

from __future__ import annotations

from collections.abc import Callable

ALSO_WRITES = {
    "singling_out_null_check": "singling_linkability_vs_anonymeter",
    "synthetic_adult_cli_vs_api": "synthetic_adult_vs_anonymeter",
    "inference_leak_bankchurners": "inference_null_bankchurners",
}

PY = ".venv/bin/python benchmarks/"
_CLI = f"{PY}synthetic_adult_vs_anonymeter.py --cli-compare --n-attacks 1000"
_HEADLINE = f"{PY}verdict_calibration_synthetic.py --part headline --tag"
_SEE = "--conditions ... (docs/audit-synthetic.md)"
COMMANDS = {
    "inference_leak_bankchurners": f"{PY}inference_null_bankchurners.py --splits 10 --leak 0.3",
    "aim_memory_maps": f"OMP_NUM_THREADS=1 {PY}aim_memory_maps.py --rounds 3",
    "aim_memory_maps_no_clearing": f"OMP_NUM_THREADS=1 {PY}aim_memory_maps.py --keep --rounds 3",
    "aim_round_iters": f"OMP_NUM_THREADS=1 {PY}aim_round_iters.py --round-iters 1000 100",
    "aim_round_iters_numpy_select": (
        f"OMP_NUM_THREADS=1 nice {PY}aim_round_iters.py --round-iters 1000 --tag numpy_select"
    ),
    "aim_round_iters_cpu_numpy": (
        f"OMP_NUM_THREADS=1 {PY}aim_round_iters.py --round-iters 1000 --select numpy --tag cpu_numpy"
    ),
    "aim_round_iters_cpu_mbi": (
        f"OMP_NUM_THREADS=1 {PY}aim_round_iters.py --round-iters 1000 --select mbi --tag cpu_mbi"
    ),
    "ctgan_bankchurners_epochs": f"OMP_NUM_THREADS=1 {PY}ctgan_bankchurners_epochs.py --epochs 100 300",
    "nnaa_dcr_scale_cli_slower_machine": f"{PY}nnaa_dcr_scale.py --skip numeric,mixed,peer --cli-rows 100000",
    "nnaa_interval_coverage_n1000": f"{PY}nnaa_interval_coverage.py --n 1000 --reps 600 "
    "--out benchmarks/results/nnaa_interval_coverage_n1000.json",
    "ray_synthetic_scaling_small": f"MIPKIT_SHARED_DATA=../shared/data {PY}ray_synthetic_scaling.py --quick",
    "ray_synthetic_scaling_8000": f"MIPKIT_SHARED_DATA=../shared/data {PY}ray_synthetic_scaling.py "
    "--equal-rows 8000 --search-rows 8000 --block-rows 2000 --tag 8000",
    "singling_out_null_check": f"{PY}singling_linkability_vs_anonymeter.py --null-check --null-repeats 60",
    "soft_labels_digits": (
        f"{PY}soft_labels_digits.py --pilot; cp benchmarks/results/soft_labels_digits_pilot_fits.npz "
        f"benchmarks/results/soft_labels_digits_fits.npz; {PY}soft_labels_digits.py --model-seed 1 "
        "--defenders 306 --budget-minutes 45"
    ),
    "soft_labels_digits_small": f"{PY}soft_labels_digits.py --quick",
    "soft_labels_digits_logistic_small": f"{PY}soft_labels_digits.py --base logistic --quick",
    "soft_labels_tabular_clean": f"OMP_NUM_THREADS=1 {PY}soft_labels_tabular.py --n-jobs 1",
    "soft_labels_tabular_noisy": f"OMP_NUM_THREADS=1 {PY}soft_labels_tabular.py --n-jobs 1",
    "soft_labels_tabular_clean_small": f"{PY}soft_labels_tabular.py --quick",
    "soft_labels_tabular_noisy_small": f"{PY}soft_labels_tabular.py --quick",
    "synthetic_adult_cli_vs_api": _CLI,
    "synthetic_adult_cli_vs_api_one_core_busy": f"{_CLI} --tag one_core_busy (one core kept busy beside it)",
    "synthetic_adult_cli_vs_api_slower_machine_idle": f"{_CLI} --tag slower_machine_idle",
    "synthetic_adult_cli_vs_api_slower_machine_load3": f"{_CLI} --tag slower_machine_load3",
    "synthetic_adult_cli_vs_api_slower_machine_omp1": f"OMP_NUM_THREADS=1 {_CLI} --tag slower_machine_omp1",
    "synthetic_adult_vs_anonymeter_inference": f"{PY}synthetic_adult_vs_anonymeter.py --inference-only",
    "verdict_calibration_synthetic_headline_null": f"{_HEADLINE} headline_null {_SEE}",
    "verdict_calibration_synthetic_headline_power": f"{_HEADLINE} headline_power {_SEE}",
    "verdict_calibration_synthetic_headline_large": f"{_HEADLINE} headline_large {_SEE}",
    "verdict_calibration_synthetic_headline_large_power": f"{_HEADLINE} headline_large_power {_SEE}",
    "verdict_calibration_synthetic_twins": f"{PY}verdict_calibration_synthetic.py --part twins --tag twins "
    "--twin-reps 1000",
}


def _n(v: dict, count: str = "count", runs: str = "runs") -> str:
    """``count/runs`` of a counted outcome."""
    return f"{v[count]}/{v[runs]}"


def _f(v: dict) -> str:
    return _n(v, "findings", "audits")


def _ci(v: dict, key: str = "eta") -> str:
    return f"{v[key]:.3f} [{v[key + '_ci'][0]:.3f}, {v[key + '_ci'][1]:.3f}]"


def accounting(d: dict) -> str:
    s = d["summary"]
    agree = s["upper_never_below_reference_lower"] and s["lower_never_above_reference_upper"]
    return (
        f"{s['cases']} cases: two-sided risks consistent with the reference {agree}; noise within 0.5% of "
        f"the reference in {s['noise_within_0.5pct_of_reference_share']:.0%}, {s['refusals']} refusals, all "
        f"proved minimal {s['all_proved_minimal']}"
    )


def aim_diagnostics(d: dict) -> str:
    aim, mst = d["budget"]["aim"], d["budget"]["mst"]
    return (
        f"sampling: largest L1 {d['sampling']['max_l1']:.4f}; BankChurners epsilon 3: AIM utility AUC "
        f"{aim['utility_auc']:.3f} ({aim['rounds']} rounds), MST {mst['utility_auc']:.3f}"
    )


def aim_refit_compare(d: dict) -> str:
    t = d["meta"]["totals"]
    worst = max(r["max_marginal_difference_over_total"] for r in d["rows"])
    return (
        f"{d['meta']['rounds']} Adult refits: NumPy {t['numpy_cpu_seconds']:.1f} s CPU, mbi "
        f"{t['mbi_cpu_seconds']:.1f} s CPU + {t['mbi_compile_seconds']:.0f} s compiling; largest marginal "
        f"difference {worst:.1e} of the total"
    )


def aim_round_iters(d: dict) -> str:
    def one(r: dict) -> str:
        select = f" ({r['select']} marginals)" if "select" in r else ""
        cpu = f", {r['fit_cpu_seconds']:.0f} s CPU" if "fit_cpu_seconds" in r else ""
        return (
            f"{r['round_iters']} refit iterations{select}: {r['rounds']} rounds, "
            f"{r['fit_seconds']:.0f} s{cpu} ({r['seconds'].get('compile', 0.0):.0f} s compiling), "
            f"workload error {r['workload_error']:.4f}, utility AUC {r['utility_auc']:.3f}"
        )

    return "; ".join(one(r) for r in d["rows"])


def ctgan_epochs(d: dict) -> str:
    return "; ".join(f"{r['name']}: utility AUC {r['utility_auc']:.3f}" for r in d["rows"])


def aim_memory_maps(d: dict) -> str:
    maps = ", ".join(f"{r['maps']:,}" for r in d["rounds"])
    return f"memory maps after each round: {maps} (limit {d['rounds'][0]['limit']:,})"


def audit_adult(d: dict) -> str:
    return (
        f"eta {_ci(d)} ({d['strongest_attack']}); held-out accuracy "
        f"{d['utility']['accuracy_nonmembers']:.3f}; {d['records']:,} records, {d['models']} models"
    )


def audit_folder(d: dict) -> str:
    return f"AUC {d['auc']:.3f}, eta {d['eta']:.3f} ({d['strongest_attack']})"


def audit_fitted(d: dict) -> str:
    return "; ".join(
        f"{k.replace('_', ' ')}: eta {_ci(d[k])} ({d[k]['strongest_attack']})"
        for k in ("fitted_model", "training_procedure")
    )


def bankchurners(d: dict) -> str:
    diffs = ", ".join(f"{k.replace('_', ' ')} {v:.3f}" for k, v in d["mean_abs_diff_from_published"].items())
    return f"mean absolute difference from the published figures: {diffs}"


def inference_null(d: dict) -> str:
    parts = (
        ("like for like", "like_for_like"),
        ("against the exact mode", "fallback_mode_exact"),
        ("against the mode within tolerance", "fallback_mode_tolerance"),
    )
    alarms = ", ".join(
        f"{label} {d[k].get('fired', d[k].get('false_alarms'))}/{d[k]['splits']}" for label, k in parts
    )
    kind = f"splits with {100 * d['leak']:g}% copied rows" if d.get("leak") else "null splits"
    return f"{kind} where the inference policy fired: {alarms}"


def calibrate_large_t(d: dict) -> str:
    s = d["summary"]
    t = s["large_T"]
    return (
        f"T = 1e6: noise {t['noise']:.4f}, minimal {t['minimal']}, {t['seconds']:.1f} s; former refusals "
        f"gone {s['refusals_gone']}"
    )


def riskcal(d: dict) -> str:
    return "; ".join(
        f"q {r['sample_rate']:g}, T {r['steps']}, {r['label']}: mipkit {r['mipkit_noise']:.4f} in "
        f"{r['mipkit_seconds']:.2f} s, riskcal {r['riskcal_noise']:.4f} in {r['riskcal_seconds']:.0f} s"
        for r in d["rows"]
    )


def certified_bounds(d: dict) -> str:
    return "; ".join(
        f"epsilon {e}: null violations {_n(v['null_violation'])} (point rule "
        f"{_n(v['null_point_above_bound'])}), leak found {_n(v['leak_violation'])}"
        for e, v in d["epsilons"].items()
    )


def dp_lower_bounds(d: dict) -> str:
    v = d["validity"]
    return (
        f"largest difference from jax_privacy {d['max_abs_diff']:.1e}; randomized response: bounds above "
        f"epsilon {v['cp_bound_above_eps']}/{v['runs']} (Clopper-Pearson), "
        f"{v['one_run_bound_above_eps']}/{v['runs']} (one run)"
    )


def dpsgd(d: dict) -> str:
    targets = "; ".join(
        f"target {t['target_tpr_at_1pct']:g}: noise {t['noise_multiplier']:.3f}, accuracy "
        f"{t['accuracy_heldout']:.3f}, TPR@1% {t['measured_tpr_at_1pct']:.4f}"
        for t in d["targets"]
    )
    return f"{targets}; non-private accuracy {d['non_private']['accuracy_heldout']:.3f}"


def engine(d: dict) -> str:
    rates = ", ".join(f"{r['config']} {r['warm_fits_per_second_median']:.2f}" for r in d["rows"])
    return f"warm fits/s: {rates}; identical outputs {d['outputs_identical_across_configurations']}"


def ltu(d: dict) -> str:
    counts = ", ".join(
        f"{s} {sum(r['privacy'] == 0 for r in d['rows'] if r['scenario'] == s)}/"
        f"{sum(r['scenario'] == s for r in d['rows'])} models"
        for s in ("original", "random", "unseeded")
    )
    return f"LTU privacy 0: {counts}"


def mip_exact(d: dict) -> str:
    row = next(r for r in d["exact_12_records"] if r["eta"] == 0.05)
    return "optimal accuracy at eta 0.05 (bound 0.55): " + ", ".join(
        f"{k} {v:.4f}" for k, v in row.items() if "tightest" in k
    )


def mip_attack(d: dict) -> str:
    full = [r for r in d["rows"] if r["noise_factor"] == 1]
    less = ", ".join(f"{r['accuracy']:.3f}" for r in d["rows"] if r["noise_factor"] != 1)
    kept = sum(r["upper_ci_within_bound"] for r in full)
    return f"full noise: upper CI within 1/2 + eta in {kept}/{len(full)} rows; 1/20 of the noise: {less}"


def mip_parallel(d: dict) -> str:
    return (
        f"{d['n_fits']} fits: {d['seconds_1_worker']:.2f} s on 1 worker, {d['seconds_2_workers']:.2f} s on 2 "
        f"(x{d['speedup']:.2f}); identical {d['identical_outputs']}"
    )


def mip_utility(d: dict) -> str:
    acc = ", ".join(f"{r['method']} {r['test_accuracy_mean']:.3f}" for r in d["rows"] if r["eta"] == 0.1)
    return f"test accuracy at eta 0.1: {acc}; non-private {d['non_private_test_accuracy']:.3f}"


def neighbors(d: dict) -> str:
    one, two = d["one_way"]["k=1"], d["two_way"]
    same = all(v["same"] for v in [*d["one_way"].values(), two])
    return (
        f"pruned / screened: one-way k=1 {one['pruned_s']:.2f} / {one['screened_s']:.2f} s, two-way "
        f"{two['pruned_s']:.2f} / {two['screened_s']:.2f} s; same neighbours {same}"
    )


def cli_vs_api(d: dict) -> str:
    c = d["cli_vs_api"]
    return (
        f"{c['rows']:,} rows: command {c['cli']['seconds']:.1f} s / {c['cli']['peak_rss_mb']:.0f} MB, "
        f"library {c['api']['seconds']:.1f} s / {c['api']['peak_rss_mb']:.0f} MB "
        f"(x{c['time_ratio_cli_over_api']:.2f})"
    )


def nnaa_dcr(d: dict) -> str:
    num, mix = d["numeric"], d["mixed"]
    return (
        f"numeric {num['n']:,} rows: {num['total_s']:.0f} s, {num['peak_rss_mb']:.0f} MB; mixed {mix['n']:,} "
        f"rows: {mix['nnaa_s'] + mix['dcr_s']:.0f} s; " + cli_vs_api(d)
    )


def nnaa_coverage(d: dict) -> str:
    cov = ", ".join(
        f"{k} {d[k]['neighbourhood']['privacy_loss']['coverage']:.2f} / "
        f"{d[k]['jackknife']['privacy_loss']['coverage']:.2f}"
        for k in ("null", "leaky")
    )
    return f"privacy-loss coverage (neighbourhood / jackknife): {cov}"


def rmia(d: dict) -> str:
    ours = d["rows"][0]
    return (
        f"mipkit at 50,000 x 50,000: {ours['tracemalloc_peak_mb']:.1f} MB, {ours['seconds']:.2f} s; the "
        f"N x M matrix would take {d['naive_full_size_mb_computed'] / 1024:.0f} GB; identical scores "
        f"{d['identical_at_small_size']}"
    )


def singling(d: dict) -> str:
    s = d["summary"]
    if "ratio_total" not in s:  # anonymeter's figures from an earlier run: its risks, no time ratio
        return f"mipkit {s['mipkit_total_s']:.1f} s; anonymeter's risks from {s['anonymeter_source']}"
    return (
        f"mipkit {s['mipkit_total_s']:.1f} s, anonymeter {s['anonymeter_total_s']:.1f} s "
        f"(x{s['ratio_total']:.1f})"
    )


def singling_null(d: dict) -> str:
    out = (
        f"null intervals excluding 0: one size {d['equal_size']['share']:.1%}, training size "
        f"{d['training_size']['share']:.1%} ({d['repeats']} repeats)"
    )
    if "adult" in d:
        a = d["adult"]
        out += (
            f"; Adult splits, training size {a['univariate/training_size']['excluding_0']}/{a['repeats']} "
            f"univariate, {a['multivariate/training_size']['excluding_0']}/{a['repeats']} multivariate"
        )
    return out


def soft_labels(d: dict) -> str:
    s = {r["setting"]: r for r in d["settings"]}
    hard, osl = s["hard"], s["OSL validated"]
    if "vs_hard" in osl:  # the digits run: differences from hard labels with cluster-bootstrap intervals
        v = osl["vs_hard"]
        p, a = v["ltu_privacy"], v["test_accuracy"]
        return (
            f"OSL validated minus hard labels, {osl['n_defender_models']} defender models: LTU privacy "
            f"{p['estimate']:+.3f} [{p['ci'][0]:+.3f}, {p['ci'][1]:+.3f}], test accuracy "
            f"{a['estimate']:+.3f} [{a['ci'][0]:+.3f}, {a['ci'][1]:+.3f}]"
        )
    pareto = ", ".join(r["setting"] for r in d["settings"] if r.get("pareto_optimal"))
    return (
        f"accuracy / LTU privacy: hard {hard['test_accuracy_mean']:.3f} / {hard['ltu_privacy']:.3f}, OSL "
        f"validated {osl['test_accuracy_mean']:.3f} / {osl['ltu_privacy']:.3f}; Pareto front: {pareto}"
    )


def synthesizers(d: dict) -> str:
    by_method: dict[str, list[str]] = {}
    for r in d["rows"]:
        auc = f"{r['utility_auc']:.3f}" if "utility_auc" in r else "failed"
        eps = "" if r["epsilon"] is None else f" (eps {r['epsilon']:g})"
        by_method.setdefault(r["method"], []).append(auc + eps)
    return "utility AUC " + "; ".join(f"{m} {', '.join(v)}" for m, v in by_method.items())


def synthesizers_speed(d: dict) -> str:
    return "fit + sample: " + ", ".join(f"{r['method']} {r['seconds']:.0f} s" for r in d["rows"])


def dpwgan_configs(d: dict) -> str:
    aucs, lost = [r["auc"] for r in d["rows"]], [r["collapse"] for r in d["rows"]]
    return (
        f"{len(d['rows'])} configurations: utility AUC {min(aucs):.2f}-{max(aucs):.2f}, categories never "
        f"generated {min(lost):.0%}-{max(lost):.0%}"
    )


def dpwgan_clip(d: dict) -> str:
    return "; ".join(
        f"eps {r['epsilon']:g}: utility AUC {r['utility_auc']:.3f}, categories never generated "
        f"{r['categories_never_generated']:.0%}, {r['seconds']:.0f} s"
        for r in d["rows"]
    )


def dpwgan_clip_sampling(d: dict) -> str:
    parts = []
    for r in d["rows"]:
        auc = {k: v["utility_auc"] for k, v in r["samplers"].items()}
        best = max(auc, key=auc.get)
        parts.append(
            f"eps {r['epsilon']:g} seed {r['seed']}: utility AUC last weights {auc['last']:.3f}, "
            f"{best} {auc[best]:.3f}"
        )
    return "; ".join(parts)


def wgan_nonprivate(d: dict) -> str:
    return "; ".join(
        f"{k}: utility AUC {v['utility_auc']:.2f}, categories never generated {v['mode_collapse_share']:.0%}"
        for k, v in d["rows"].items()
    )


def cli_compare(d: dict) -> str:
    r = d["runs"]
    return (
        f"command / library: anonymeter's work x{r['anonymeter_work']['cli_over_api']:.2f}, without report "
        f"x{r['anonymeter_work_no_report']['cli_over_api']:.2f}, default attacks "
        f"x{r['default_attacks']['cli_over_api']:.2f}; anonymeter's process / the command "
        f"x{d['anonymeter_process_over_cli']:.1f} (x{d['anonymeter_process_over_cli_no_report']:.1f} "
        "without report)"
    )


def anonymeter(d: dict) -> str:
    s = d["summary"]
    return (
        f"inference {s['mipkit_inference_s']:.0f} s, anonymeter {s['anonymeter_first_s']:.0f} s first / "
        f"{s['anonymeter_second_s']:.0f} s warm; whole audit {s['mipkit_full_audit_s']:.0f} s"
    )


def anonymeter_inference(d: dict) -> str:
    return (
        f"mipkit {d['mipkit_s']:.1f} s, anonymeter {d['anonymeter_first_s']:.1f} s first / "
        f"{d['anonymeter_second_s']:.1f} s warm"
    )


def verdict_model(d: dict) -> str:
    leaks = ", ".join(f"{k} {_n(v['after'])}" for k, v in d["power"].items())
    return (
        f"null false alarms before {_n(d['null']['headline_before'])}, after "
        f"{_n(d['null']['headline_after'])}; leaks found after: {leaks}"
    )


def verdict_noise(d: dict) -> str:
    null, power = d["null"], d["power"]
    return (
        f"null findings before {_f(null['before'])}, after {_f(null['after'])}; leak found before "
        f"{_f(power['before'])}, after {_f(power['after'])}"
    )


def verdict_synthetic(d: dict) -> str:
    cov = ", ".join(f"{k} {v['privacy_loss']['coverage']:.3f}" for k, v in d["coverage"]["methods"].items())
    null = ", ".join(f"{k} {_f(v)}" for k, v in d["calibration"]["null"]["verdicts"].items())
    return f"privacy-loss interval coverage: {cov}; null findings: {null}"


def verdict_headline(d: dict) -> str:
    conds = d["headline"]["conditions"]
    return "findings at --fail-above 0 / 0.05: " + "; ".join(
        f"{c} {_f(v['verdicts']['headline@0'])} / {_f(v['verdicts']['headline@0.05'])}"
        for c, v in conds.items()
    )


def verdict_twins(d: dict) -> str:
    alarms = ", ".join(
        f"{k} {_n(v['false_alarms']['0.95'], 'findings', 'reps')}" for k, v in d["twins"]["designs"].items()
    )
    return f"false alarms at 95%: {alarms}"


def ray_synthetic(d: dict) -> str:
    equal = ", ".join(f"{e['rows']:,} rows {'equal' if e['equal'] else 'DIFFERENT'}" for e in d["equality"])
    runs = d["speed"]["runs"]
    names = ("local_1_threads", "ray_1_cpus", "ray_2_cpus", "sklearn_brute_1_jobs")
    per = ", ".join(f"{k} {runs[k]['s_per_mpairs']:.3f}" for k in names)
    return f"local vs Ray results: {equal}; s per million pairs: {per}"


HEADLINES: dict[str, Callable[[dict], str]] = {
    "accounting_vs_dp_accounting": accounting,
    "aim_diagnostics": aim_diagnostics,
    "aim_memory_maps": aim_memory_maps,
    "aim_round_iters": aim_round_iters,
    "aim_refit_compare": aim_refit_compare,
    "ctgan_bankchurners_epochs": ctgan_epochs,
    "audit_adult": audit_adult,
    "audit_adult/": audit_folder,
    "audit_fitted_adult": audit_fitted,
    "bankchurners_baseline": bankchurners,
    "calibrate_large_T": calibrate_large_t,
    "inference_null_bankchurners": inference_null,
    "inference_leak_bankchurners": inference_null,
    "calibration_vs_riskcal": riskcal,
    "certified_bounds_calibration": certified_bounds,
    "dp_lower_bounds_vs_peer": dp_lower_bounds,
    "dpsgd_adult": dpsgd,
    "dpwgan_clip_adult": dpwgan_clip,
    "dpwgan_clip_sampling_adult": dpwgan_clip_sampling,
    "engine_throughput": engine,
    "fig1_mip_vs_dp": lambda d: (
        f"published / Theorem A noise at eta 0.05: {d['published_over_theorem_a_at_0.05']:.0f}x"
    ),
    "ltu_digits": ltu,
    "mip_exact_tiny_pool": mip_exact,
    "mip_optimal_attack": mip_attack,
    "mip_sigma_parallel": mip_parallel,
    "mip_utility_breast_cancer": mip_utility,
    "neighbors_pruned_adult": neighbors,
    "nnaa_dcr_scale": nnaa_dcr,
    "nnaa_dcr_scale_cli_slower_machine": cli_vs_api,
    "nnaa_interval_coverage": nnaa_coverage,
    "ray_synthetic_scaling": ray_synthetic,
    "rmia_memory": rmia,
    "singling_linkability_vs_anonymeter": singling,
    "singling_out_null_check": singling_null,
    "soft_labels": soft_labels,
    "synthesizers": synthesizers,
    "synthesizers_adult_speed3": synthesizers_speed,
    "synthesizers_dpwgan_configs": dpwgan_configs,
    "synthesizers_wgan_nonprivate": wgan_nonprivate,
    "synthetic_adult_cli_vs_api": cli_compare,
    "synthetic_adult_vs_anonymeter": anonymeter,
    "synthetic_adult_vs_anonymeter_inference": anonymeter_inference,
    "verdict_calibration_model": verdict_model,
    "verdict_calibration_noise": verdict_noise,
    "verdict_calibration_synthetic": verdict_synthetic,
    "verdict_calibration_synthetic_headline": verdict_headline,
    "verdict_calibration_synthetic_twins": verdict_twins,
}
