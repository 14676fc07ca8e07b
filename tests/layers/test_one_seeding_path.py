"""One seeding path: integer seeds come from ``mipkit._random`` (``spawn_seeds`` / ``spawn_seed``), never
from a bound written by hand (``rng.integers(2**31)``, ``rng.integers(0, 2**31 - 1)``, ``2**62``).

A hand-written draw picks its own range: two of them that should hand a job the same seed do not (a fit run
by the runner and the same fit run alone), and a ``2**62`` seed given to a library that keeps 32 bits
(torch's CPU generator, ``np.random.seed``) is silently cut. The lower layers (every package below
``workflows`` and ``cli``) draw through ``_random``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

from mipkit._random import spawn_seed, spawn_seeds
from mipkit.engine.runner import tasks_from_membership

SRC = Path(__file__).resolve().parents[2] / "src" / "mipkit"
UPPER = ("workflows", "cli")


def _power_of_two(node: ast.AST) -> bool:
    return any(
        isinstance(n, ast.BinOp)
        and isinstance(n.op, (ast.Pow, ast.LShift))
        and isinstance(n.left, ast.Constant)
        and n.left.value in (1, 2)
        for n in ast.walk(node)
    )


def hand_drawn_seeds(src: Path, skip: tuple[str, ...] = ()) -> list[str]:
    """``"file:line"`` of each ``.integers(...)`` call bounded by a power of two outside ``_random.py``."""
    found = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src)
        if rel.parts[0] in skip or rel.as_posix() == "_random.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "integers"
                and any(_power_of_two(a) for a in node.args)
            ):
                found.append(f"{rel.as_posix()}:{node.lineno}")
    return found


def test_the_lower_layers_draw_no_seed_by_hand() -> None:
    assert not hand_drawn_seeds(SRC, skip=UPPER)


def test_a_hand_drawn_seed_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "seed = int(rng.integers(2**62))\nrows = rng.integers(0, n, size=5)\nx = g.integers(0, 1 << 31)\n"
    )
    assert sorted(hand_drawn_seeds(tmp_path)) == ["a.py:1", "a.py:3"]


def test_spawn_seed_is_the_next_seed_of_the_stream() -> None:
    g, h = np.random.default_rng(5), np.random.default_rng(5)
    assert [spawn_seed(g), spawn_seed(g), *spawn_seeds(g, 2)] == spawn_seeds(h, 4)
    assert spawn_seed(7) == spawn_seeds(7, 1)[0]
    assert all(0 <= spawn_seed(None) < 2**31 - 1 for _ in range(5))


def test_the_runner_hands_each_fit_the_seed_spawn_seeds_gives() -> None:
    mask = np.ones((4, 6), dtype=bool)
    tasks = tasks_from_membership(mask, random_state=11)
    assert [t.seed for t in tasks] == spawn_seeds(11, 4)
