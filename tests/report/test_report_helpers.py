"""Report helpers: JSON conversion, plain log-axis labels, Matplotlib loaded in the background; and the
thread pool the neighbour searches run their blocks on."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mipkit.data.neighbors.search import run_blocks
from mipkit.report.html import plain_log_ticks
from mipkit.report.results import to_jsonable


def test_to_jsonable_float_lists_match_the_entry_by_entry_conversion():
    curve = [0.1, 1.0, float("nan"), float("inf"), -2.5]
    assert to_jsonable(curve) == [0.1, 1.0, None, None, -2.5]
    mixed = [1, 0.5, np.float64(0.25), np.nan, True]  # not all plain floats: each entry converted
    assert to_jsonable(mixed) == [1, 0.5, 0.25, None, True]
    assert to_jsonable(()) == []
    assert to_jsonable({"a": (0.5, math.nan)}) == {"a": [0.5, None]}


def test_plain_log_ticks_label_decades_as_numbers():
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.subplots()
    ax.plot([1e-3, 1], [1e-3, 1])
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_xlim(1e-3, 1)
    fig.canvas.draw()
    labels = {t.get_text() for t in ax.get_xticklabels() if t.get_text()}
    assert {"0.001", "0.01", "0.1", "1"} <= labels
    assert not any("$" in t or "10^" in t for t in labels)  # no mathtext
    assert all(t.get_text() == "" for t in ax.xaxis.get_minorticklabels())


@pytest.mark.timeout(1800)  # a busy machine makes the import slow, not wrong
def test_preload_plotting_imports_matplotlib_on_a_thread():
    """In a fresh interpreter (this one may have Matplotlib already): not loaded before, loaded by the thread,
    with the Agg backend."""
    import subprocess
    import sys

    code = (
        "import sys, threading\n"
        "from mipkit.report.html import preload_plotting\n"
        "assert 'matplotlib' not in sys.modules\n"
        "t = preload_plotting()\n"
        "assert isinstance(t, threading.Thread) and t.daemon\n"
        "t.join()\n"
        "assert not t.is_alive() and 'matplotlib.pyplot' in sys.modules\n"
        "import matplotlib\n"
        "print(matplotlib.get_backend().lower())\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "agg"


@pytest.mark.parametrize("n_jobs", [1, 2, 3])
def test_run_blocks_keeps_block_order(n_jobs):
    blocks = [(i, i + 1) for i in range(7)]
    assert run_blocks(lambda a, b: a * 10 + b, blocks, n_jobs) == [a * 10 + b for a, b in blocks]


def test_run_blocks_raises_a_blocks_error():
    def work(i):
        if i == 3:
            raise ValueError("block 3")
        return i

    with pytest.raises(ValueError, match="block 3"):
        run_blocks(work, [(i,) for i in range(6)], 2)
