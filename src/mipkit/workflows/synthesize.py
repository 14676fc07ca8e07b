"""Make private synthetic data: a table in, a synthetic table and its certificate out.

:func:`synthesize` fits one synthesizer of :mod:`mipkit.synthesize` (DP-WGAN-GP, its centre-and-scale variant,
AIM, MST or the non-private CTGAN), samples ``rows`` records and returns a :class:`SynthesisResult`;
:meth:`SynthesisResult.write` writes ``synthetic.csv`` and ``certificate.json`` into a folder. The privacy is
set by ``epsilon`` (with ``delta``) or by any mipkit risk target (docs/synthesize.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mipkit._validation import MipkitValueError, check_choice, check_interval, check_positive_int
from mipkit.synthesize.certificate import SynthesisCertificate

__all__ = ["MAX_EPSILON", "SynthesisResult", "synthesize"]

MAX_EPSILON = 100.0
"""Largest epsilon a synthesizer is run at: above it the guarantee certifies nothing (``e^100`` is about
``10^43``, every certified risk is at its maximum) and ``e^epsilon`` overflows a float from 710 on."""


@dataclass(frozen=True)
class SynthesisResult:
    """A synthetic table, the certificate of the synthesizer that made it, and the time it took.

    Attributes
    ----------
    method : str
    synthetic : DataFrame
    certificate : SynthesisCertificate
    seconds : float
        Fit and sampling, wall clock (a resumed fit adds what the killed run spent up to its checkpoint).
    fit_seconds : float
    delta : float or None
    resumed_from : int
        Where a killed fit was resumed from (``checkpoint``): DP-WGAN-GP's generator iteration, AIM's round;
        0 when it ran whole.
    """

    method: str
    synthetic: pd.DataFrame = field(repr=False)
    certificate: SynthesisCertificate
    seconds: float
    fit_seconds: float
    delta: float | None
    resumed_from: int = 0

    def summary(self) -> dict:
        """What ``mipkit synthesize --json`` prints: method, epsilon, delta, rows, seconds, certified, ..."""
        c = self.certificate
        return {
            "method": self.method,
            "epsilon": c.headline_epsilon,
            "delta": c.delta if c.certified else self.delta,
            "neighbours": c.neighbours,
            "rows": int(len(self.synthetic)),
            "seconds": float(self.seconds),
            "fit_seconds": float(self.fit_seconds),
            "certified": c.summary(),
            "epsilon_by_relation": dict(c.epsilon),
            "resumed_from": self.resumed_from,
        }

    def write(self, out: str | Path) -> Path:
        """Write ``synthetic.csv`` and ``certificate.json`` into the folder ``out`` (created)."""
        from mipkit._runfolder import atomic_write, staged_writes

        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        with staged_writes(folder):  # both renamed into place together, once both are written
            atomic_write(folder / "synthetic.csv", self.synthetic.to_csv(index=False))
            self.certificate.write(folder / "certificate.json")
        return folder


def synthesize(
    data: pd.DataFrame,
    *,
    method: str,
    epsilon: float | None = None,
    delta: float = 1e-5,
    target: Any = None,
    rows: int | None = None,
    domain: dict | None = None,
    random_state: int | None = 0,
    progress: Callable[[int, int], None] | None = None,
    checkpoint: str | Path | None = None,
    **options: Any,
) -> SynthesisResult:
    """Fit ``method`` on ``data`` and sample ``rows`` records (default: as many as ``data`` has).

    Parameters
    ----------
    data : DataFrame
        The private table.
    method : {"dpwgan-gp", "dpwgan-gp-scaled", "aim", "mst", "ctgan"}
    epsilon : float, optional
        Privacy budget, ``> 0`` (with ``delta``); default 3 unless ``target``.
    delta : float
        In ``(0, 1)``.
    target : RiskTarget, optional
        Any mipkit risk target instead of ``epsilon`` (e.g. ``EtaTarget(0.1)``).
    rows : int, optional
        Synthetic records, ``>= 1``.
    domain : dict, optional
        Public column domain; default: read from ``data`` (recorded in the certificate).
    random_state : int, optional
    progress : callable, optional
        ``progress(done, total)`` while fitting.
    checkpoint : path, optional
        A file for the training state of the methods that resume (:data:`~mipkit.synthesize.peers.RESUMABLE`):
        a fit killed part-way and started again with the same data and parameters continues from it and
        gives the result of an uninterrupted run. Removed when the fit ends; the other methods ignore it.
    **options
        Passed to the synthesizer.
    """
    from mipkit.synthesize.peers import METHODS, RESUMABLE, make_synthesizer

    owner = "synthesize"
    method = check_choice("method", method, METHODS, owner=owner)
    if not isinstance(data, pd.DataFrame):
        raise MipkitValueError(
            f"The 'data' parameter of {owner} must be a DataFrame. Got {type(data).__name__}."
        )
    n_rows = len(data) if rows is None else check_positive_int("rows", rows, owner=owner)
    if epsilon is not None:
        check_interval("epsilon", epsilon, 0.0, MAX_EPSILON, closed="right", owner=owner)
    if not (isinstance(delta, (int, float)) and 0.0 < delta < 1.0):
        raise MipkitValueError(f"The 'delta' parameter of {owner} must be in (0, 1). Got {delta!r} instead.")
    from mipkit.synthesize.preprocess import infer_domain

    infer_domain(data)  # refuses an empty table and empty or all-missing columns before any fitting
    from mipkit.data.io import check_not_mostly_numeric

    for column in data.columns:  # a number column with a typo would become one category per value
        if not pd.api.types.is_numeric_dtype(data[column]):
            check_not_mostly_numeric(data[column], str(column))
    if checkpoint is not None and method in RESUMABLE:
        options["checkpoint"] = checkpoint
    clock = time.perf_counter()
    synth = make_synthesizer(
        method, epsilon=epsilon, delta=delta, target=target, domain=domain,
        random_state=random_state, progress=progress, **options,
    )  # fmt: skip
    synth.fit(data)
    before = float(getattr(synth, "resumed_seconds_", 0.0))  # a resumed fit: the killed run's time too
    fit_seconds = time.perf_counter() - clock + before
    table = synth.sample(n_rows)
    return SynthesisResult(
        method=method,
        synthetic=table,
        certificate=synth.certificate_,
        seconds=time.perf_counter() - clock + before,
        fit_seconds=fit_seconds,
        delta=float(delta),
        resumed_from=int(getattr(synth, "resumed_from_", 0)),
    )
