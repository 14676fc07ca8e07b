"""Engine throughput: fits per second with 1 and 2 local workers and with Ray (2 CPUs).

A realistic audit fit: scikit-learn's ``MLPClassifier(hidden_layer_sizes=(32,), max_iter=60)`` (or
``--trainer logreg``: ``LogisticRegression(max_iter=1000)``) trained on a random half of ``--records`` real
UCI Adult records (``../shared/data/adult/adult.data``; override the folder with ``MIPKIT_SHARED_DATA``;
one-hot, standardised) and queried on all of them, as :func:`mipkit.engine.run_fits` does in an audit. Every
configuration fits the same ``--fits`` tasks (LiRA's balanced split, seeded), so the outputs must be
bit-identical across configurations; the script checks it.

For each configuration two rates are reported:

- *cold*: the first call, including starting the worker pool (joblib/loky) or the Ray worker processes;
- *warm*: later calls with the pool already running (what a long audit sees after the first minute);
  ``--repeats`` calls per configuration, interleaved across configurations, median and best reported.

Ray's own start (``ray.init`` of a local instance) is timed separately. No ledger is used (``ledger=None``),
so every call fits everything.

Run (about 3-5 minutes on 2 busy cores)::

    .venv/bin/python benchmarks/engine_throughput.py            # MLP, 3,000 records, 16 fits per run
    .venv/bin/python benchmarks/engine_throughput.py --quick    # logreg, 1,000 records, 8 fits

Writes ``benchmarks/results/engine_throughput.json`` (``--quick`` writes ``engine_throughput_small.json``).
The machine these numbers come from has 2 cores shared with other jobs: the load average is recorded
next to the figures, and the 2-worker speed-up is bounded by 2.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from mipkit.data.io import features_target  # noqa: E402
from mipkit.engine import FitWarning, run_fits, tasks_from_membership  # noqa: E402
from mipkit.game import balanced_membership, resolve_trainer  # noqa: E402

COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
    "income",
]  # fmt: skip

TRAINERS = {
    "mlp": ("sklearn.neural_network.MLPClassifier", {"hidden_layer_sizes": [32], "max_iter": 60}),
    "logreg": ("sklearn.linear_model.LogisticRegression", {"max_iter": 1000}),
}


def shared_data() -> Path:
    return Path(os.environ.get("MIPKIT_SHARED_DATA", ROOT.parent / "shared" / "data"))


def load_adult(n_records: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    path = shared_data() / "adult" / "adult.data"
    if not path.is_file():
        sys.exit(f"Adult not found at {path} (set MIPKIT_SHARED_DATA)")
    df = pd.read_csv(path, header=None, names=COLUMNS, skipinitialspace=True, na_values=["?"])
    df = df.drop(columns=["fnlwgt", "education"]).dropna().reset_index(drop=True)
    rng = np.random.default_rng(seed)
    df = df.iloc[np.sort(rng.choice(len(df), size=n_records, replace=False))].reset_index(drop=True)
    ds = features_target(df, "income", encode="onehot")
    sd = ds.X.std(axis=0)
    X = (ds.X - ds.X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return X, ds.y


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trainer", choices=sorted(TRAINERS), default="mlp")
    parser.add_argument("--records", type=int, default=3000)
    parser.add_argument("--fits", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="warm calls per configuration")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray configuration")
    parser.add_argument("--quick", action="store_true", help="logreg, 1,000 records, 8 fits")
    args = parser.parse_args(argv)
    if args.quick:
        args.trainer, args.records, args.fits, args.repeats = "logreg", 1000, 8, 2

    X, y = load_adult(args.records, args.seed)
    trainer = resolve_trainer(*TRAINERS[args.trainer])
    tasks = tasks_from_membership(
        balanced_membership(len(y), args.fits, random_state=args.seed), random_state=1
    )
    load_before = os.getloadavg()[0]
    configs = {"local, 1 worker": {"n_jobs": 1}, "local, 2 workers": {"n_jobs": 2}}
    ray = None
    ray_start = None
    if not args.no_ray:
        try:
            import ray
        except ImportError:
            print("ray not installed: skipping the Ray configuration (pip install mipkit[distributed])")
        else:
            _, ray_start = timed(
                lambda: ray.init(
                    num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="WARNING"
                )
            )
            print(f"ray.init (local instance, 2 CPUs): {ray_start:.1f} s, not counted below")
            configs["ray, 2 CPUs"] = {"backend": "ray", "n_jobs": 2}

    def fit_all(kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FitWarning)  # e.g. ConvergenceWarning of the short MLP fits
            return run_fits(trainer, X, y, tasks, progress=False, **kwargs)

    outputs: dict[str, np.ndarray] = {}
    cold: dict[str, float] = {}
    warm: dict[str, list[float]] = {name: [] for name in configs}
    loads: dict[str, list[float]] = {name: [] for name in configs}
    try:
        for name, kwargs in configs.items():  # first call: starts the worker pool / Ray workers
            outputs[name], cold[name] = timed(lambda kwargs=kwargs: fit_all(kwargs))
            print(f"{name:>16}: cold {len(tasks) / cold[name]:6.2f} fits/s")
        for _ in range(args.repeats):  # warm calls, interleaved so that the machine's load hits all alike
            for name, kwargs in configs.items():
                out, seconds = timed(lambda kwargs=kwargs: fit_all(kwargs))
                assert np.array_equal(out, outputs[name])
                warm[name].append(seconds)
                loads[name].append(os.getloadavg()[0])
    finally:
        if ray is not None and ray.is_initialized():
            ray.shutdown()
    rows = []
    for name in configs:
        median = float(np.median(warm[name]))
        rows.append(
            {
                "config": name,
                "fits": len(tasks),
                "cold_seconds": round(cold[name], 3),
                "cold_fits_per_second": round(len(tasks) / cold[name], 3),
                "warm_seconds": [round(t, 3) for t in warm[name]],
                "warm_fits_per_second_median": round(len(tasks) / median, 3),
                "warm_fits_per_second_best": round(len(tasks) / min(warm[name]), 3),
                "load_average_1min": [round(v, 2) for v in loads[name]],
            }
        )
        print(
            f"{name:>16}: warm {len(tasks) / median:6.2f} fits/s (median of {args.repeats}), "
            f"best {len(tasks) / min(warm[name]):6.2f}"
        )

    reference = next(iter(outputs.values()))
    identical = all(np.array_equal(reference, out) for out in outputs.values())
    print(f"outputs identical across configurations: {identical}")
    base = rows[0]["warm_fits_per_second_median"]
    for row in rows:
        row["warm_speedup_vs_1_worker"] = round(row["warm_fits_per_second_median"] / base, 2)
    result = {
        "benchmark": "engine_throughput",
        "command": "python benchmarks/engine_throughput.py" + (" --quick" if args.quick else ""),
        "trainer": trainer.describe(),
        "data": f"UCI Adult adult.data (real), {len(y)} records, {X.shape[1]} one-hot/standardised features",
        "train_rows_per_fit": int(np.mean([t.train_idx.size for t in tasks])),
        "query_rows_per_fit": len(y),
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "load_average_1min_at_start": round(load_before, 2),
        },
        "ray_init_seconds": None if ray_start is None else round(ray_start, 2),
        "outputs_identical_across_configurations": identical,
        "rows": rows,
    }
    out_dir = ROOT / "benchmarks" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    name = "engine_throughput_small.json" if args.quick else "engine_throughput.json"
    (out_dir / name).write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out_dir / name}")
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
