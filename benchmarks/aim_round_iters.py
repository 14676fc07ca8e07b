"""AIM's refits: the published 1,000 mirror-descent iterations after each measurement against fewer, and
where a fit's time goes.

On BankChurners (the split of ``synthesizers_bankchurners.py``) restricted to the target ``Attrition_Flag``
and its five strongest predictors (:data:`COLUMNS`), AIM at ``--epsilon`` with the published horizon
(16 d rounds), the same ``noise_seed`` for every setting, for each ``round_iters`` in ``--round-iters``:

* the cliques selected, round by round, and the first round where they differ from the first setting's
  (the selections draw from the same generator, so the same models give the same picks);
* the workload error of the final model: mean over the 2-way marginals of the L1 distance between the
  real and the model's normalised marginal (what AIM minimises), and the utility AUC of its synthetic table
  (:func:`mipkit.synthesizers.quality.utility_auc`);
* the time: the whole fit (wall clock and the process's CPU time, the fair measure on a shared machine),
  the mirror-descent refits (``refit``), the selections (:meth:`_select`:
  the size check of every candidate and its marginal under the model), and the XLA compilation time JAX
  reports (``/jax/core/compile/backend_compile_duration``), part of the refits' and selections' time.

``--refit mbi`` refits the model after each measurement with ``mbi``'s compiled mirror descent (one XLA
program per model structure; float32 unless ``JAX_ENABLE_X64=1``) instead of mipkit's NumPy one
(:mod:`mipkit.synthesizers.aim_descent`, float64);
``--select mbi`` scores the candidates with ``mbi``'s own marginals (one compiled program per clique and
model structure) instead of mipkit's NumPy ones (:mod:`mipkit.synthesizers.aim_marginals`).

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/aim_round_iters.py [--round-iters 1000 100]
[--select mbi] [--refit mbi]``.
Results: ``benchmarks/results/aim_round_iters[_<tag>].json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import time
import warnings

import numpy as np

from synthesizers_adult import RESULTS
from synthesizers_bankchurners import BANKCHURNERS

COLUMNS = [
    "Attrition_Flag", "Total_Trans_Ct", "Total_Trans_Amt", "Total_Revolving_Bal", "Total_Ct_Chng_Q4_Q1",
    "Total_Relationship_Count",
]  # fmt: skip


def timed(cls, name: str, clock: dict):
    """Wrap method ``name`` of ``cls`` so that its seconds add up in ``clock[name]``."""
    inner = getattr(cls, name)

    def wrapper(self, *a, **kw):
        t = time.perf_counter()
        try:
            return inner(self, *a, **kw)
        finally:
            clock[name] = clock.get(name, 0.0) + time.perf_counter() - t

    setattr(cls, name, wrapper)


def workload_error(synth, train) -> float:
    """Mean over the 2-way marginals of the L1 distance between real and model normalised marginals."""
    ds = synth._mbi.Dataset(synth.disc_.encode_positions(train), synth.model_.domain)
    errs = []
    for cl in itertools.combinations(synth.disc_.attributes, 2):
        x = np.asarray(ds.project(cl).datavector(), float)
        y = np.asarray(synth.model_.project(cl).datavector(), float)
        errs.append(float(np.abs(x / x.sum() - y / y.sum()).sum()))
    return float(np.mean(errs))


def main() -> None:
    import jax

    from mipkit.synthesizers.aim import AIMSynthesizer
    from mipkit.synthesizers.peers_mbi import drop_compiled_programs_if_many
    from mipkit.synthesizers.quality import utility_auc

    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser()
    ap.add_argument("--round-iters", nargs="+", type=int, default=[1000, 100])
    ap.add_argument("--epsilon", type=float, default=3.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", action="store_true", help="the target workload (params target)")
    ap.add_argument(
        "--select", choices=["numpy", "mbi"], default="numpy",
        help="the candidates' marginals: mipkit's NumPy ones, or mbi's compiled variable elimination",
    )  # fmt: skip
    ap.add_argument(
        "--refit", choices=["numpy", "mbi"], default="numpy",
        help="the refits: mipkit's NumPy mirror descent, or mbi's compiled one",
    )  # fmt: skip
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    train, test = BANKCHURNERS["load"]()
    cols = COLUMNS
    train, test = train[cols], test[cols]
    target, positive = BANKCHURNERS["target"], BANKCHURNERS["positive"]
    if args.select == "mbi":  # the candidates' marginals from mbi's model.project (one program per clique)
        import mipkit.synthesizers.aim as aim_module

        aim_module.model_marginals = lambda model, cliques: {
            tuple(cl): np.asarray(model.project(cl).datavector(), float) for cl in cliques
        }
    import mipkit.synthesizers.aim as aim_module

    if args.refit == "mbi":  # mbi's MirrorDescent, compiled for each model structure

        def refit(dom, meas, iters, warm=None):
            from mbi.estimation import MirrorDescent

            drop_compiled_programs_if_many()
            return MirrorDescent().estimate(dom, meas, iters=iters, warm_start=warm)

        aim_module.mirror_descent = refit
    clock: dict = {}
    timed(AIMSynthesizer, "_select", clock)
    inner = aim_module.mirror_descent

    def refit_timed(*a, **kw):
        t = time.perf_counter()
        try:
            return inner(*a, **kw)
        finally:
            clock["refit"] = clock.get("refit", 0.0) + time.perf_counter() - t

    aim_module.mirror_descent = refit_timed
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, secs, **_: (
            clock.__setitem__("compile", clock.get("compile", 0.0) + secs)
            if event == "/jax/core/compile/backend_compile_duration"
            else None
        )
    )
    rows = []
    for iters in args.round_iters:
        clock.clear()
        t, cpu = time.perf_counter(), time.process_time()
        synth = AIMSynthesizer(
            epsilon=args.epsilon, round_iters=iters, iters=1000, random_state=args.seed, noise_seed=args.seed,
            target=target if args.target else None,
        ).fit(train)  # fmt: skip
        fit, cpu = time.perf_counter() - t, time.process_time() - cpu
        syn = synth.sample(len(train))
        row = {
            "round_iters": iters, "fit_seconds": fit, "fit_cpu_seconds": cpu, "rounds": synth.rounds_,
            "select": args.select, "refit": args.refit,
            "cliques": [r["clique"] for r in synth.round_log_],
            "halved": [r["round"] for r in synth.round_log_ if r["halved"]],
            "workload_error": workload_error(synth, train),
            "utility_auc": utility_auc(syn, test, target=target, positive=positive, seed=args.seed),
            "seconds": {k: float(v) for k, v in clock.items()},
        }  # fmt: skip
        if rows:
            first = rows[0]["cliques"]
            row["first_difference"] = next(
                (i + 1 for i, (a, b) in enumerate(zip(first, row["cliques"], strict=False)) if a != b),
                None if len(first) == len(row["cliques"]) else min(len(first), len(row["cliques"])) + 1,
            )
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "cliques"}), flush=True)
    meta = {**vars(args), "columns": cols, "train_rows": len(train), "load": os.getloadavg()}
    name = "aim_round_iters" + (f"_{args.tag}" if args.tag else "")
    (RESULTS / f"{name}.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
