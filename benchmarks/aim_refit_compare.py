"""AIM's refits on Adult, one by one: mipkit's NumPy mirror descent against ``mbi``'s compiled one on the same
measurements and warm start.

AIM at ``--epsilon`` (3) with the published horizon, ``noise_seed`` 0, on the full Adult training table: after
each measurement the fit refits with :func:`mipkit.synthesizers.aim_descent.mirror_descent` (the path it
follows) and, on the same inputs, with ``mbi``'s ``MirrorDescent().estimate``; for each refit: wall and CPU
seconds of both, the XLA compilation seconds JAX reports for ``mbi``'s (``backend_compile_duration``, summed
over its compiling threads), the junction tree's cells, and the largest difference between the two models'
marginals over the model's total (``mbi`` runs in float32). The fit stops after ``--rounds`` rounds.

Run: ``PYTHONPATH=src OMP_NUM_THREADS=1 .venv/bin/python benchmarks/aim_refit_compare.py [--rounds 12]``.
Results: ``benchmarks/results/aim_refit_compare.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time
import warnings

import numpy as np

from synthesizers_adult import RESULTS, load_adult


class _Enough(Exception):
    """The rounds asked for are done."""


def main() -> None:
    import jax
    from mbi.estimation import MirrorDescent
    from mbi.junction_tree import make_junction_tree, maximal_cliques

    import mipkit.synthesizers.aim as aim_module
    from mipkit.synthesizers.peers_mbi import drop_compiled_programs_if_many

    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--epsilon", type=float, default=3.0)
    args = ap.parse_args()
    compiled = [0.0]
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, secs, **_: (
            compiled.__setitem__(0, compiled[0] + secs)
            if event == "/jax/core/compile/backend_compile_duration"
            else None
        )
    )
    numpy_refit, rows = aim_module.mirror_descent, []

    def both(dom, meas, iters, warm=None):
        if len(rows) > args.rounds:
            raise _Enough
        t, c = time.perf_counter(), time.process_time()
        mine = numpy_refit(dom, meas, iters, warm=warm)
        row = {"measurements": len(meas), "numpy_seconds": time.perf_counter() - t}
        row["numpy_cpu_seconds"] = time.process_time() - c
        drop_compiled_programs_if_many()
        t, c, k = time.perf_counter(), time.process_time(), compiled[0]
        ref = MirrorDescent().estimate(dom, meas, iters=iters, warm_start=warm)
        jax.block_until_ready(ref.marginals)
        row.update(mbi_seconds=time.perf_counter() - t, mbi_cpu_seconds=time.process_time() - c)
        row["mbi_compile_seconds"] = compiled[0] - k
        nodes = maximal_cliques(make_junction_tree(dom, mine.cliques)[0])
        row["junction_tree_cells"] = int(sum(dom.size(cl) for cl in nodes))
        total = float(mine.total)
        row["max_marginal_difference_over_total"] = (
            max(
                float(
                    np.max(
                        np.abs(np.asarray(ref.marginals.tables[cl].values) - mine.marginals.tables[cl].values)
                    )
                )
                for cl in mine.cliques
            )
            / total
        )
        rows.append(row)
        print(json.dumps({k: round(v, 6) if isinstance(v, float) else v for k, v in row.items()}), flush=True)
        return mine

    aim_module.mirror_descent = both
    train, _ = load_adult()
    with contextlib.suppress(_Enough):  # the rounds asked for are done
        aim_module.AIMSynthesizer(epsilon=args.epsilon, random_state=0, noise_seed=0).fit(train)
    sums = {k: float(sum(r[k] for r in rows)) for k in rows[0] if k.endswith("seconds")}
    meta = {**vars(args), "train_rows": len(train), "load": os.getloadavg(), "totals": sums}
    (RESULTS / "aim_refit_compare.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
