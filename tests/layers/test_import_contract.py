"""The layer contract (pyproject.toml, [tool.importlinter]) holds, and an upward import or a cycle breaks it.

``make test`` runs ``lint-imports`` on the real tree; these tests make sure the contract is read from
``pyproject.toml`` and that it really catches a module importing a layer above its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")

pytestmark = [
    pytest.mark.skipif(not LINT.exists(), reason="import-linter is not installed (dev extra)"),
    pytest.mark.timeout(1800),  # lint-imports on a busy machine is slow, not wrong
]


def _lint(src: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [str(LINT), "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


def test_contract_kept_on_the_source_tree(tmp_path: Path) -> None:
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    out = _lint(ROOT / "src", tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "KEPT" in out.stdout


@pytest.mark.parametrize(
    ("module", "upward"),
    [
        ("stats.py", "import mipkit.metrics.roc"),  # bottom layer importing metrics
        ("attacks/loss.py", "import mipkit.metrics.roc"),  # attacks never import metrics
        ("accounting/risk.py", "import mipkit.workflows"),  # certify importing a workflow
        ("accounting/tradeoff.py", "import mipkit.accounting.risk"),  # a cycle: risk imports tradeoff
    ],
)
def test_an_upward_import_breaks_the_contract(tmp_path: Path, module: str, upward: str) -> None:
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "mipkit", src / "mipkit", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = src / "mipkit" / module
    target.write_text(target.read_text() + f"\n{upward}  # injected by the test\n")
    out = _lint(src, tmp_path)
    assert out.returncode != 0
    assert "BROKEN" in out.stdout
