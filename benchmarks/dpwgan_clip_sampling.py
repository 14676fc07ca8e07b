"""``dpwgan-clip``'s sampling choices on real Adult, paired: one fit, every sampler.

One :class:`mipkit.synthesizers.dpwgan_clip.DPWGANClip` fit (public domain ``docs/adult-domain.json``,
defaults otherwise) keeps, beside its last generator weights, the exponential moving average of them for
each decay of ``--decays``; each of these generators then samples 32,561 rows with and without
``match_marginals``, and each table's utility AUC (train on synthetic, test on the real ``adult.test``),
positive-class rate and share of categories never generated are measured. The fit is the same for all
samplers, so the differences are the samplers' own (plus the sampling's randomness), not another run of
the GAN.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/dpwgan_clip_sampling.py --epsilon 3 --seed 0
[--decays 0.998 0.999 0.9995 0.9998]``; appends a row to
``benchmarks/results/dpwgan_clip_sampling_adult.json``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dpwgan_clip_adult import adult_domain
from synthesizers_adult import CLASSIFIER_SEED, RESULTS, load_adult

OUT = RESULTS / "dpwgan_clip_sampling_adult.json"


def fit_with_averages(train, epsilon: float, seed: int, decays: list[float]):
    """A default fit (``ema=0``: its generator is the last weights) and, per decay, the averaged weights."""
    import torch

    from mipkit.synthesizers import clip_train
    from mipkit.synthesizers.clip_sample import ema_update
    from mipkit.synthesizers.dpwgan_clip import DPWGANClip

    averages: dict[float, list] = {}
    init, step = clip_train.ClipTraining.__init__, clip_train.ClipTraining.generator_step

    def patched_init(self, *a, **k):
        init(self, *a, **k)
        averages.update({d: [p.detach().clone() for p in self.generator.parameters()] for d in decays})

    def patched_step(self):
        step(self)
        with torch.no_grad():
            for d, avg in averages.items():
                ema_update(avg, list(self.generator.parameters()), d)

    clip_train.ClipTraining.__init__, clip_train.ClipTraining.generator_step = patched_init, patched_step
    try:
        model = DPWGANClip(
            epsilon=epsilon, random_state=seed, domain=adult_domain(train, "public"), n_threads=1, ema=0.0
        ).fit(train)
    finally:
        clip_train.ClipTraining.__init__, clip_train.ClipTraining.generator_step = init, step
    generators = {"last": model.generator_}
    for d, avg in averages.items():
        g = copy.deepcopy(model.generator_)
        with torch.no_grad():
            for p, a in zip(g.parameters(), avg, strict=True):
                p.copy_(a)
        generators[f"ema{d}"] = g
    return model, generators


def main(argv: list[str] | None = None) -> None:
    from mipkit.report.results import write_json_atomic
    from mipkit.synthesizers.quality import mode_collapse_share, utility_auc

    ap = argparse.ArgumentParser()
    ap.add_argument("--epsilon", type=float, default=3.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--decays", nargs="+", type=float, default=[0.998, 0.999, 0.9995, 0.9998])
    args = ap.parse_args(argv)
    train, test = load_adult()
    t, cpu = time.perf_counter(), time.process_time()
    model, generators = fit_with_averages(train, args.epsilon, args.seed, args.decays)
    row = {"epsilon": args.epsilon, "seed": args.seed, "fit_seconds": time.perf_counter() - t,
           "fit_cpu_seconds": time.process_time() - cpu, "noise_multiplier": model.noise_multiplier_,
           "load_average": os.getloadavg(), "command": " ".join(sys.argv), "samplers": {}}  # fmt: skip
    for name, g in generators.items():
        model.generator_ = g
        for match in (False, True):
            model.match_marginals = match
            s = model.sample(len(train))
            auc = utility_auc(s, test, target="income", positive=">50K", seed=CLASSIFIER_SEED)
            row["samplers"][name + ("+match_marginals" if match else "")] = {
                "utility_auc": auc,
                "positive_rate": float((s["income"].astype(str) == ">50K").mean()),
                "categories_never_generated": mode_collapse_share(train, s),
            }
            print(name, match, row["samplers"][name + ("+match_marginals" if match else "")], flush=True)
    old = json.loads(OUT.read_text()) if OUT.exists() else {"rows": []}
    write_json_atomic(OUT, {**old, "rows": [*old["rows"], row]})


if __name__ == "__main__":
    main()
