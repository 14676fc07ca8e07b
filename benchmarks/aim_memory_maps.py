"""AIM's memory maps per round on BankChurners at epsilon 3, with and without dropping JAX's programs.

mbi compiles new XLA programs for every model structure and JAX keeps them; each holds memory maps of its own,
and Linux stops a process at ``vm.max_map_count`` (65,530 by default) with a segmentation fault. This prints
``/proc/self/maps`` after each of the first ``--rounds`` rounds: ``--keep`` sets mipkit's threshold above any
count (JAX keeps everything, as before the fix), the default uses mipkit's threshold (a third of the limit).

Run: ``OMP_NUM_THREADS=1 .venv/bin/python benchmarks/aim_memory_maps.py [--keep] [--rounds 3]`` (Linux).
Results: ``benchmarks/results/aim_memory_maps[_no_clearing].json`` (``--keep``: ``_no_clearing``).
"""

from __future__ import annotations

import argparse
import contextlib
import time
import warnings

from synthesizers_adult import RESULTS
from synthesizers_bankchurners import load_bankchurners


class Enough(Exception):
    """Raised from the progress callback after the rounds asked for."""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", action="store_true", help="never drop compiled programs (before the fix)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    from mipkit.report.results import write_json_atomic
    from mipkit.synthesizers import peers_mbi

    if args.keep:
        peers_mbi.MAP_SHARE = 2.0  # above any count: JAX keeps every program
    train, _ = load_bankchurners()
    clock, rows = time.perf_counter(), []

    def progress(stage: str, done: int, total: int) -> None:
        used, limit = peers_mbi.memory_maps()
        rows.append({"round": done, "seconds": time.perf_counter() - clock, "maps": used, "limit": limit})
        print(rows[-1], flush=True)
        if done >= args.rounds:
            raise Enough

    from mipkit.synthesizers.aim import AIMSynthesizer

    synth = AIMSynthesizer(epsilon=3.0, rounds=64, round_iters=100, random_state=0, progress=progress)
    with contextlib.suppress(Enough):
        synth.fit(train)
    name = "aim_memory_maps" + ("_no_clearing" if args.keep else "")
    write_json_atomic(RESULTS / f"{name}.json", {"keep_programs": args.keep, "rounds": rows})


if __name__ == "__main__":
    main()
