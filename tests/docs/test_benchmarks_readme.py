"""benchmarks/README.md is what benchmarks/make_readme.py writes from the scripts and their saved results,
and every file under benchmarks/results is cited by a docs page, the README or the script that writes it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def make_readme():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import make_readme

        yield make_readme
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_committed_readme_is_the_generated_one(make_readme) -> None:
    committed = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    assert committed == make_readme.render(), (
        "benchmarks/README.md is stale: run .venv/bin/python benchmarks/make_readme.py and commit it"
    )


def test_every_result_file_is_cited(make_readme) -> None:
    assert make_readme.uncited() == [], "cite these in docs/ or a script, or git rm them"


def test_every_result_has_its_script_and_headline(make_readme) -> None:
    scripts = [p.stem for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_")]
    for name, files in make_readme.result_groups().items():
        if name != "synthesizers_dpwgan_configs":  # made by a script that is not in the repository
            assert make_readme.owner(name, scripts), name
        if any(f.endswith(".json") for f in files):
            assert make_readme.headline(name, files), f"{name}: no headline figures (see _readme_results.py)"


def test_a_result_named_nowhere_is_caught(make_readme, tmp_path) -> None:
    for name in ("audit_adult.json", "audit_adult_busy_core.json", "fig1_mip_vs_dp.png"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "audit_adult").mkdir()
    (tmp_path / "audit_adult" / "report.html").write_text("")
    assert make_readme.uncited(tmp_path) == ["audit_adult_busy_core.json"]


@pytest.mark.parametrize(
    ("text", "name", "cited"),
    [
        ("`benchmarks/results/fig1_mip_vs_dp.{png,csv,json}`.", "fig1_mip_vs_dp.csv", True),
        (
            "results in `soft_labels_tabular_{clean,noisy}[_small].json`",
            "soft_labels_tabular_noisy_small.json",
            True,
        ),
        ("saved as `synthesizers_<table>*.json`", "synthesizers_adult_core.json", True),
        ("`benchmarks/results/audit_adult/` holds the run", "audit_adult/report.html", True),
        ("the **verdict** and `*_cluster` intervals", "verdict_calibration_model.json", False),
        ("`dpsgd_adult.json`", "dpsgd_adult_small.json", False),
    ],
)
def test_citation_patterns(make_readme, text: str, name: str, cited: bool) -> None:
    assert bool(make_readme.cited_by(name, {"page": make_readme.citation_patterns(text)})) is cited
