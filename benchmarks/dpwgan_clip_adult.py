"""``dpwgan-clip`` on real Adult: utility, categories never generated and wall time, per epsilon.

Trains :class:`mipkit.synthesizers.dpwgan_clip.DPWGANClip` through :func:`mipkit.synthesize` on UCI
``adult.data`` (32,561 rows) with the public column domain ``docs/adult-domain.json`` (read as the CLI reads
``--domain``; its column names mapped in order onto the benchmark's; every category of ``adult.data`` is in
it; ``--domain inferred`` reads the domain from the training rows instead), samples as many rows and
measures

* utility: AUC on the real ``adult.test`` of a gradient-boosting classifier trained on the synthetic table
  to predict income > 50K (train-on-synthetic, test-on-real), beside the same classifier trained on real;
* categories never generated: the share of the real (column, category) pairs absent from the synthetic
  table (:func:`mipkit.synthesizers.quality.mode_collapse_share`);
* wall time and CPU time of fit + sample (on a shared machine the CPU time of a one-thread run is what it
  takes on an idle core), and the certificate's epsilon, noise multiplier, ``q``, ``C`` and steps.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/dpwgan_clip_adult.py --epsilons 3 1 [--seeds 0 1 2]
[--device cuda] [--threads 1] [--params '{"steps": 3000}'] [--tag NAME]``: one row per (seed, epsilon), the
seed is ``random_state`` of the synthesizer (the protective noise comes from OS entropy in every run), the
classifier's seed is 0 throughout. Results: ``benchmarks/results/dpwgan_clip_adult[_<tag>].json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthesizers_adult import CLASSIFIER_SEED, RESULTS, ROOT, load_adult

PUBLIC_DOMAIN = ROOT / "docs" / "adult-domain.json"


def adult_domain(train, source: str) -> dict:
    """The column domain: the public file's entries under the benchmark's column names, or inferred."""
    from mipkit.data.domain import read_domain
    from mipkit.synthesizers.preprocess import infer_domain

    if source == "inferred":
        return infer_domain(train)
    public = read_domain(PUBLIC_DOMAIN)
    return dict(zip(train.columns, public.values(), strict=True))


def run(epsilon: float, seed: int, args, train, test, real_auc: float) -> dict:
    """One (seed, epsilon): fit, sample and measure (module docstring)."""
    from mipkit.synthesizers.quality import mode_collapse_share, utility_auc
    from mipkit.workflows.synthesize import PrivateTable, SynthesizeConfig, synthesize

    params = {"device": args.device, "n_threads": args.threads, **json.loads(args.params)}
    t, cpu = time.perf_counter(), time.process_time()

    def progress(stage: str, done: int, total: int) -> None:
        if done % 500 == 0 or done == total:
            print(f"  {stage}: {done}/{total}, {time.perf_counter() - t:.0f} s", flush=True)

    res = synthesize(
        PrivateTable(train, adult_domain(train, args.domain)),
        SynthesizeConfig(method="dpwgan-clip", epsilon=epsilon, delta=args.delta, rows=len(train),
                         random_state=seed, params=params),
        progress=progress,
    )  # fmt: skip
    seconds, cpu_seconds = time.perf_counter() - t, time.process_time() - cpu
    cert = res.certificate
    keys = ("sample_rate", "noise_multiplier", "max_grad_norm", "steps", "expected_batch", "clipped_share")
    return {
        "seed": seed,
        "epsilon": epsilon,
        "certified_epsilon": cert.epsilon,
        "utility_auc": utility_auc(
            res.synthetic, test, target="income", positive=">50K", seed=CLASSIFIER_SEED
        ),
        "real_auc": real_auc,
        "categories_never_generated": mode_collapse_share(train, res.synthetic),
        "positive_rate": float((res.synthetic["income"].astype(str) == ">50K").mean()),
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "load_average": os.getloadavg(),
        "params": params,
        **{k: cert.details.get(k) for k in keys},
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epsilons", nargs="+", type=float, default=[3.0, 1.0])
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--seeds", nargs="+", type=int, default=[0])
    ap.add_argument("--domain", choices=["public", "inferred"], default="public")
    ap.add_argument("--device", default="cpu", help="torch device of the networks: cpu or cuda")
    ap.add_argument("--threads", type=int, default=1, help="torch threads of the fit")
    ap.add_argument("--params", default="{}", help="DPWGANClip options as JSON")
    ap.add_argument("--tag", default="")
    args = ap.parse_args(argv)
    from mipkit.report.results import write_json_atomic
    from mipkit.synthesizers.quality import utility_auc

    train, test = load_adult()
    real_auc = utility_auc(train, test, target="income", positive=">50K", seed=CLASSIFIER_SEED)
    meta = {"train_rows": len(train), "test_rows": len(test), "seeds": args.seeds, "device": args.device,
            "threads": args.threads, "cpus": os.cpu_count(), "domain": args.domain,
            "domain_file": str(PUBLIC_DOMAIN.relative_to(ROOT)) if args.domain == "public" else None,
            "command": " ".join(sys.argv)}  # fmt: skip
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "dpwgan_clip_adult" + (f"_{args.tag}" if args.tag else "") + ".json"
    rows = []
    for seed in args.seeds:
        for eps in args.epsilons:
            rows.append(run(eps, seed, args, train, test, real_auc))
            print(json.dumps(rows[-1]), flush=True)
            write_json_atomic(RESULTS / name, {"meta": meta, "rows": rows})  # after every row


if __name__ == "__main__":
    main()
