"""The records the attacks on a released table hand to the metrics that score them (nothing scored yet).

:mod:`mipkit.attacks` fills them (singling out, attribute inference, linkability) and :mod:`mipkit.metrics`
reads them; metrics may not import attacks, so the records live here, below both. They are data about the
rows of the original and control tables (row positions, secret values, guesses, predicate counts), in the
column order of a :class:`~mipkit.data.tables.TableSchema`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mipkit.data.tables import TableSchema

__all__ = [
    "EQ",
    "GE",
    "LE",
    "MISSING",
    "OP_TEXT",
    "InferenceGuesses",
    "LinkabilityGuesses",
    "Predicates",
    "SinglingOutCounts",
]

#: The operators of a predicate's conditions (``Predicates.op``) and their text.
EQ, LE, GE, MISSING = 0, 1, 2, 3
OP_TEXT = ("==", "<=", ">=", "is missing")


@dataclass(frozen=True)
class Predicates:
    """Conjunctions of conditions ``column op value``, one row per predicate.

    Attributes
    ----------
    col : int array of shape (m, k)
        Column positions (in ``schema.columns`` order) of the ``k`` conditions.
    op : int array of shape (m, k)
        ``0``: ``==``, ``1``: ``<=``, ``2``: ``>=``, ``3``: is missing.
    value : float array of shape (m, k)
        The numeric value or the category code (0 for "is missing").
    """

    col: np.ndarray
    op: np.ndarray
    value: np.ndarray

    def __len__(self) -> int:
        return int(self.col.shape[0])

    def take(self, index: np.ndarray) -> Predicates:
        return Predicates(self.col[index], self.op[index], self.value[index])

    def describe(self, i: int, schema: TableSchema) -> str:
        """Predicate ``i`` as text, e.g. ``"age >= 71 and sex == 'Female'"``."""
        cols, n_num = schema.columns, len(schema.numeric)
        parts = []
        for j, o, v in zip(self.col[i], self.op[i], self.value[i], strict=True):
            name = cols[j]
            if o == MISSING:
                parts.append(f"{name} is missing")
            elif j < n_num:
                parts.append(f"{name} {OP_TEXT[o]} {v:g}")
            else:
                levels = schema.levels[name]
                text = levels[int(v)] if int(v) < len(levels) else None
                parts.append(f"{name} is missing" if text is None else f"{name} == {text!r}")
        return " and ".join(parts)


@dataclass(frozen=True)
class SinglingOutCounts:
    """The singling-out attack's predicates and how many distinct rows each matches in every table.

    ``counts_original[i] == 1``: predicate ``i`` singles out a training record (a success);
    ``counts_control`` is the same on the non-member table (``None`` without one).
    """

    mode: str
    n_requested: int
    n_cols: int
    predicates: Predicates
    attempts: int
    counts_original: np.ndarray
    counts_control: np.ndarray | None
    n_original: int
    n_control: int | None
    n_synthetic: int


@dataclass(frozen=True)
class InferenceGuesses:
    """What the attacks and the non-member baseline guess for one secret (nothing scored yet).

    Attributes
    ----------
    secret : str
    known : tuple of str
        The columns the attacker knows.
    numeric : bool
        Whether the secret is a numeric column.
    tolerance : float
        Absolute tolerance of a right numeric guess (``tolerance`` times the range of the targets' values; 0
        for a categorical secret).
    tolerance_share : float
        The same tolerance as a share of the column's range (what results files store: it reveals nothing
        about the records).
    rows : ndarray of int
        The targets' row positions in the original table (sorted).
    truth : ndarray
        The targets' secret values.
    attacks : dict
        ``{attack: (guesses, confidence)}`` on the targets, from the synthetic table; the first attack is
        also run on the control targets.
    baselines : dict
        ``{baseline: guesses}`` on the same targets from the original without the targets: each attack
        (when the non-member baseline runs) and ``"most_frequent"``.
    control_rows, control_truth, control_guesses : ndarray or None
        The control targets, their secret values and the first attack's guesses for them (``None``
        without a control table).
    refits : dict
        ``{analysis: guesses}`` with ``guesses`` of shape ``(R, n_targets)``: the analysis refitted on ``R``
        bootstrap resamples of the rows it learns from, keyed ``"attack/<name>"`` (synthetic rows) and
        ``"baseline/<name>"`` (the original without the targets); empty when no refit was run.
    """

    secret: str
    known: tuple[str, ...]
    numeric: bool
    tolerance: float
    rows: np.ndarray
    truth: np.ndarray
    attacks: dict[str, tuple[np.ndarray, np.ndarray]]
    baselines: dict[str, np.ndarray]
    control_rows: np.ndarray | None = None
    control_truth: np.ndarray | None = None
    control_guesses: np.ndarray | None = None
    tolerance_share: float | None = None
    refits: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def primary(self) -> str:
        """The first attack (the one run on the control targets)."""
        return next(iter(self.attacks))


@dataclass(frozen=True)
class LinkabilityGuesses:
    """Per target: whether its two halves were linked, for training and control targets."""

    aux_cols: tuple[tuple[str, ...], tuple[str, ...]]
    n_neighbors: int
    rows: np.ndarray
    linked: np.ndarray
    tied: np.ndarray
    control_rows: np.ndarray | None
    control_linked: np.ndarray | None
    control_tied: np.ndarray | None
