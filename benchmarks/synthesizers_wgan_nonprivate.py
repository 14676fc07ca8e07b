"""The non-private WGAN-GP of DP-WGAN-GP's own run (noise multiplier 0, default architecture and steps) on
real Adult and BankChurners: the comparison behind the thesis's observation that DP reduces mode collapse.

Run: ``OMP_NUM_THREADS=1 .venv/bin/python benchmarks/synthesizers_wgan_nonprivate.py`` (a few minutes);
results in ``benchmarks/results/synthesizers_wgan_nonprivate.json``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mipkit.synthesizers import DPWGANGP  # noqa: E402
from mipkit.synthesizers.quality import fidelity, mode_collapse_share, utility_auc  # noqa: E402
from synthesizers_adult import load_adult  # noqa: E402
from synthesizers_bankchurners import load_bankchurners  # noqa: E402

TABLES = (
    ("adult", load_adult, "income", ">50K"),
    ("bankchurners", load_bankchurners, "Attrition_Flag", "Attrited Customer"),
)


def main() -> None:
    out = {}
    for name, load, target, positive in TABLES:
        train, test = load()
        t = time.perf_counter()
        model = DPWGANGP(noise_multiplier=0.0, random_state=0).fit(train)
        synth = model.sample(len(train), random_state=0)
        f = fidelity(train, synth, seed=0)
        out[name] = {
            "seconds": time.perf_counter() - t,
            "tvd_1way": f["tvd_1way"],
            "tvd_2way": f["tvd_2way"],
            "mode_collapse_share": mode_collapse_share(train, synth),
            "utility_auc": utility_auc(synth, test, target=target, positive=positive, seed=0),
        }
        print(name, json.dumps(out[name]), flush=True)
    result = {
        "what": "DPWGANGP(noise_multiplier=0.0, random_state=0): default architecture and steps, no noise "
        "(the non-private WGAN-GP of the same run), for the thesis's mode-collapse comparison",
        "command": "OMP_NUM_THREADS=1 .venv/bin/python benchmarks/synthesizers_wgan_nonprivate.py",
        "rows": out,
    }
    (HERE / "results" / "synthesizers_wgan_nonprivate.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
