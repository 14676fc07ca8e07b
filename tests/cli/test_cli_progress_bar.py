"""The command line draws the progress the quiet library reports: FitProgress and fits_label."""

from __future__ import annotations

import os

from mipkit.cli._progress import FitProgress, fits_label


def test_fits_label_names_backend_and_workers():
    assert fits_label("local", 2) == "fits (local, 2 workers)"
    assert fits_label("local", 1) == "fits (local, 1 worker)"
    assert fits_label("ray", 4) == "fits (ray, 4 CPUs)"
    assert fits_label("ray", 4, "auto") == "fits (ray @ auto)"
    assert fits_label() == f"fits (local, {os.cpu_count()} worker{'s' if os.cpu_count() > 1 else ''})"


def test_bar_goes_to_stderr_and_stages_end_it(capsys):
    with FitProgress("fits (local, 2 workers)") as bar:
        bar.say("Auditing [the] model...")
        bar(0, 3)
        bar(2, 3)
        bar(3, 3)
        bar.say("Next stage")
        bar(1, 1)
    out, err = capsys.readouterr()
    assert out == ""  # --json output on stdout stays clean
    assert "> Auditing [the] model..." in err  # printed as written, not read as Rich markup
    assert "fits (local, 2 workers)" in err and "3/3" in err and "1/1" in err
    assert err.index("Auditing") < err.index("3/3") < err.index("Next stage") < err.index("1/1")


def test_disabled_bar_prints_nothing(capsys):
    with FitProgress("fits", enabled=False) as bar:
        bar.say("hidden")
        bar(1, 2)
    assert capsys.readouterr() == ("", "")
