"""Shared fixtures: the real datasets in ../shared/data (skipped with a reason when absent)."""

from __future__ import annotations

import os
from pathlib import Path

# One thread per test process: `make test` runs two pytest workers on a two-core machine, and BLAS, OpenMP
# (scikit-learn's gradient boosting) and torch threads on top of them would oversubscribe the cores (a
# 500-row gradient-boosting fit took 24 s so, 0.5 s alone). Set before numpy, scipy or torch is imported;
# subprocesses of the CLI tests inherit it. Results do not depend on it (tests/engine checks backends agree).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("MIPKIT_SHARED_DATA", ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Folder of the real datasets; tests that need it skip when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real datasets not found at {SHARED_DATA} (set MIPKIT_SHARED_DATA to point at them)")
    return SHARED_DATA


def _skeleton(obj):
    """Keys and list lengths of a JSON value, its scalars left out: what a file's shape says."""
    if isinstance(obj, dict):
        return {k: _skeleton(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return ["list", len(obj), *[_skeleton(v) for v in obj if isinstance(v, (dict, list))]]
    return "null" if obj is None else "scalar"


@pytest.fixture(scope="session")
def skeleton():
    """The shape of a JSON value (keys and list lengths, no scalar): two releases that differ in one
    record must have the same one."""
    return _skeleton


def pytest_collection_modifyitems(config, items):
    """Tests that start a local Ray instance run one after another on the same pytest worker (xdist group)."""
    for item in items:
        if item.get_closest_marker("ray") is not None:
            item.add_marker(pytest.mark.xdist_group("ray"))
