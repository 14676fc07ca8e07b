"""The command line draws the progress the quiet library reports: ProgressBar and fits_label."""

from __future__ import annotations

import os

from mipkit.cli._progress import ProgressBar, fits_label


def test_fits_label_names_backend_and_workers():
    assert fits_label("local", 2) == "fits (local, 2 workers)"
    assert fits_label("local", 1) == "fits (local, 1 worker)"
    assert fits_label("ray", 4) == "fits (ray, 4 CPUs)"
    assert fits_label("ray", 4, "auto") == "fits (ray @ auto)"
    assert fits_label() == f"fits (local, {os.cpu_count()} worker{'s' if os.cpu_count() > 1 else ''})"


def test_bar_goes_to_stderr_and_stages_end_it(capsys):
    with ProgressBar(labels={"model fits": "fits (local, 2 workers)"}) as bar:
        bar("Auditing [the] model...", 0, 0)  # an uncounted stage: a line
        bar("model fits", 0, 3)
        bar("model fits", 2, 3)
        bar("model fits", 3, 3)
        bar("Next stage", 0, 0)
        bar("model fits", 1, 1)
    out, err = capsys.readouterr()
    assert out == ""  # --json output on stdout stays clean
    assert "> Auditing [the] model..." in err  # printed as written, not read as Rich markup
    assert "fits (local, 2 workers)" in err and "3/3" in err and "1/1" in err
    assert err.index("Auditing") < err.index("3/3") < err.index("Next stage") < err.index("1/1")


def test_disabled_bar_prints_nothing(capsys):
    with ProgressBar(enabled=False) as bar:
        bar("hidden", 0, 0)
        bar("model fits", 1, 2)
    assert capsys.readouterr() == ("", "")


def test_each_stage_gets_its_own_bar_with_its_eta(capsys):
    """A new stage ends the bar of the one before and starts its own, with elapsed time and ETA."""
    with ProgressBar() as bar:
        bar("NNAA neighbour searches", 0, 4)
        bar("NNAA neighbour searches", 4, 4)
        bar("DCR", 0, 1)
        bar("DCR", 1, 1)
    out, err = capsys.readouterr()
    assert out == ""
    assert "NNAA neighbour searches" in err and "4/4" in err and "ETA" in err and "DCR" in err
    assert "1/1" in err and err.index("4/4") < err.index("DCR")


def test_audit_synthetic_draws_its_stages_with_an_eta(tmp_path, capsys):
    import numpy as np
    import pandas as pd

    from mipkit.cli import main

    rng = np.random.default_rng(0)
    for name in ("orig", "syn", "ctrl"):
        pd.DataFrame({"a": rng.normal(size=40), "b": rng.integers(0, 3, 40)}).to_csv(
            tmp_path / f"{name}.csv", index=False
        )
    f = {name: str(tmp_path / f"{name}.csv") for name in ("orig", "syn", "ctrl")}
    argv = ["audit-synthetic", "--original", f["orig"], "--synthetic", f["syn"], "--control", f["ctrl"]]
    argv += ["--checks", "dcr", "--out", str(tmp_path / "run"), "--no-report"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "DCR" in err and "ETA" in err and "elapsed" in err
