"""Singling out and linkability in the synthetic-data audit: the attacks, then their measures.

:func:`singling_out` runs :func:`mipkit.attacks.singling_out.singling_out_counts` and scores it with
:func:`mipkit.metrics.singling_out.measure_singling_out`; :func:`linkability` runs
:func:`mipkit.attacks.linkability.linkability_guesses` and scores it with
:func:`mipkit.metrics.linkability.measure_linkability`. Both measure against records the generator never saw
(``docs/theory.md`` section 6), as anonymeter's evaluators (Giomi et al., PoPETs 2023) do.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from mipkit._random import RandomState
from mipkit._validation import MipkitValueError, check_positive_int
from mipkit.attacks.linkability import check_aux_columns, linkability_guesses
from mipkit.attacks.singling_out import MODES, singling_out_counts
from mipkit.data.tables import TableSchema
from mipkit.metrics.linkability import LinkabilityResult, measure_linkability
from mipkit.metrics.singling_out import SinglingOutResult, measure_singling_out

__all__ = ["check_linkability", "check_singling_out", "linkability", "singling_out"]


def check_singling_out(n_predicates: int, n_cols: int, schema: TableSchema) -> tuple[int, int]:
    """``n_predicates >= 1`` and ``1 <= n_cols <= number of columns``."""
    n = check_positive_int("singling_out", n_predicates, owner="audit_synthetic")
    k = check_positive_int("singling_out_cols", n_cols, owner="audit_synthetic")
    if k > len(schema.columns):
        raise MipkitValueError(
            f"The 'singling_out_cols' parameter of audit_synthetic must be at most {len(schema.columns)} "
            f"(the number of columns). Got {k} instead."
        )
    return n, k


def check_linkability(aux_cols: Sequence[Sequence[str]], n_neighbors: int, schema: TableSchema) -> tuple:
    """Two disjoint, non-empty lists of known columns and ``n_neighbors >= 1``."""
    check_positive_int("linkability_neighbors", n_neighbors, owner="audit_synthetic")
    return check_aux_columns(aux_cols, schema.columns)


def singling_out(
    original: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    schema: TableSchema,
    control: pd.DataFrame | None,
    n_predicates: int = 500,
    n_cols: int = 3,
    modes: Sequence[str] = MODES,
    confidence: float = 0.95,
    random_state: RandomState = None,
) -> dict[str, SinglingOutResult]:
    """Univariate and multivariate singling out, each scored against the control (one seed per mode)."""
    from mipkit._random import spawn_seeds

    seeds = spawn_seeds(random_state, len(modes))
    out = {}
    for mode, seed in zip(modes, seeds, strict=True):
        counts = singling_out_counts(
            original,
            synthetic,
            schema=schema,
            control=control,
            mode=mode,
            n_predicates=n_predicates,
            n_cols=n_cols,
            random_state=seed,
        )
        out[mode] = measure_singling_out(counts, confidence=confidence)
    return out


def linkability(
    original: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    schema: TableSchema,
    aux_cols: Sequence[Sequence[str]],
    control: pd.DataFrame | None,
    n_attacks: int = 500,
    n_neighbors: int = 1,
    random_state: RandomState = None,
    n_jobs: int = 2,
) -> LinkabilityResult:
    """The linkability attack on training and control targets, measured."""
    guesses = linkability_guesses(
        original,
        synthetic,
        schema=schema,
        aux_cols=aux_cols,
        control=control,
        n_attacks=n_attacks,
        n_neighbors=n_neighbors,
        random_state=random_state,
        n_jobs=n_jobs,
    )
    return measure_linkability(guesses)
