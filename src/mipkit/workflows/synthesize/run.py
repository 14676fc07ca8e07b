"""Make private synthetic data: a table in, a synthetic table and its certificate out.

:func:`synthesize` fits one synthesizer of :mod:`mipkit.synthesize` (DP-WGAN-GP, its centre-and-scale variant,
AIM, MST or the non-private CTGAN), samples ``rows`` records and returns a :class:`SynthesisResult`;
:meth:`SynthesisResult.write` writes ``synthetic.csv`` and ``certificate.json`` into a folder. The privacy is
set by ``epsilon`` (with ``delta``) or by any mipkit risk target (docs/synthesize.md).

The column domain is public (``domain=``, declared by the user and used as is) or estimated with differential
privacy from a share of ``epsilon`` and ``delta`` (:mod:`mipkit.synthesize.dpdomain`; the synthesizer gets the
rest and the certificate composes both); it is never read from the data silently. Identifier-like columns
and infinite values are refused before any fitting, and integer and bool columns keep their type.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mipkit._validation import MipkitValueError, check_choice, check_interval, check_positive_int
from mipkit.synthesize.certificate import SynthesisCertificate, with_domain
from mipkit.synthesize.tablecheck import check_finite, check_identifiers, drop_columns, restore_types

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
        """What ``mipkit synthesize --json`` prints: method, epsilon, delta, rows, seconds, certified, ...,
        and ``domain`` (where the column domain came from, and its share of the budget)."""
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
            "noise_source": c.noise_source,
            "resumed_from": self.resumed_from,
            "domain": c.details.get("domain"),
        }

    def write(self, out: str | Path, *, raw_csv: bool = False) -> Path:
        """Write ``synthetic.csv`` (formula cells neutralised for spreadsheets unless ``raw_csv``:
        :func:`mipkit.data.csv_out.to_safe_csv`) and ``certificate.json`` into the folder ``out``
        (created)."""
        from mipkit._runfolder import atomic_write, staged_writes
        from mipkit.data.csv_out import to_safe_csv

        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        with staged_writes(folder, replaces=("synthetic.csv", "certificate.json")):  # renamed together
            atomic_write(folder / "synthetic.csv", to_safe_csv(self.synthetic, raw=raw_csv))
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
    domain_share: float | None = None,
    drop: list[str] | None = None,
    random_state: int | None = 0,
    noise_seed: int | None = None,
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
        Public column domain (``{column: {"type": "numeric", "min", "max"[, "integer", "missing"]}`` or
        ``{"type": "categorical", "categories": [...][, "missing"]}``), used as is. Default: estimated with
        differential privacy from ``domain_share`` of the budget (``epsilon`` only: refused with a risk
        ``target``, a fixed ``noise_multiplier`` or replace-one ``neighbours``); CTGAN reads it from the data.
    domain_share : float, optional
        Share of ``epsilon`` and ``delta`` spent on the domain when none is given, in ``(0, 1)``; default
        :data:`~mipkit.synthesize.dpdomain.DEFAULT_SHARE` (0.1).
    drop : list of str, optional
        Columns left out (identifier-like columns are refused otherwise, unless ``domain`` declares them).
    random_state : int, optional
        Seeds what is not protective: initial weights, drawing the synthetic records.
    noise_seed : int, optional
        The DP noise, secret batches and private selections come from OS entropy unless this is given;
        with it the same ``random_state`` and ``noise_seed`` give the same table, which then is not private
        against anyone who holds ``noise_seed`` (the certificate's ``noise_source`` says which).
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
    data = drop_columns(data, drop)
    from mipkit.synthesize.preprocess import check_domain, conform, infer_domain

    infer_domain(data, max_categories=len(data) + 1)  # refuses empty tables and all-missing columns
    from mipkit.data.io import check_not_mostly_numeric

    for column in data.columns:  # a number column with a typo would become one category per value
        if not pd.api.types.is_numeric_dtype(data[column]):
            check_not_mostly_numeric(data[column], str(column))
    check_finite(data)
    check_identifiers(data, declared=domain if isinstance(domain, dict) else ())
    fit_epsilon, fit_delta, train, estimate = epsilon, delta, data, None
    if domain is not None:
        if domain_share is not None:
            raise MipkitValueError("Give a public domain (--domain FILE) or --domain-share, not both.")
        domain = check_domain(domain, data)
        train = conform(data, domain)
        source: dict = {"source": "public file", "epsilon": 0.0}
    if method == "ctgan":  # not private: it reads its own encoding from the data whatever the domain
        source = {"source": "data", "epsilon": None}
    elif domain is None:
        estimate = _estimate_domain(data, method, epsilon, delta, target, domain_share, noise_seed, options)
        domain = estimate.domain
        train = conform(data, domain, estimate.fill)
        fit_epsilon = (3.0 if epsilon is None else float(epsilon)) - estimate.epsilon
        fit_delta = float(delta) - estimate.delta
        source = estimate.summary()
    if checkpoint is not None and method in RESUMABLE:
        options["checkpoint"] = checkpoint
    clock = time.perf_counter()
    synth = make_synthesizer(
        method, epsilon=fit_epsilon, delta=fit_delta, target=target, domain=domain,
        random_state=random_state, noise_seed=noise_seed, progress=progress, **options,
    )  # fmt: skip
    synth.fit(train)
    before = float(getattr(synth, "resumed_seconds_", 0.0))  # a resumed fit: the killed run's time too
    fit_seconds = time.perf_counter() - clock + before
    table = restore_types(synth.sample(n_rows), {str(c): data[c].dtype for c in data.columns}, domain)
    return SynthesisResult(
        method=method,
        synthetic=table,
        certificate=with_domain(
            synth.certificate_, source, None if estimate is None else estimate.record(), _notes(estimate)
        ),
        seconds=time.perf_counter() - clock + before,
        fit_seconds=fit_seconds,
        delta=float(delta),
        resumed_from=int(getattr(synth, "resumed_from_", 0)),
    )


#: Key of the domain estimate's stream of a ``noise_seed`` (apart from the synthesizer's own).
_DOMAIN_STREAM = 0x646F6D61696E  # "domain"


def _estimate_domain(
    data: pd.DataFrame,
    method: str,
    epsilon: float | None,
    delta: float,
    target: Any,
    share: float | None,
    noise_seed: int | None,
    options: dict,
) -> Any:
    """The domain estimated with ``share`` of ``(epsilon, delta)``, its noise from the protective stream
    (:func:`mipkit._random.noise_generator`); refused where the budget is not an ``epsilon`` to split (one
    line naming ``--domain FILE``)."""
    from mipkit._random import noise_generator
    from mipkit.synthesize.dpdomain import DEFAULT_SHARE, estimate_domain

    why = None
    if target is not None:
        why = "a --target-risk calibration"
    elif options.get("noise_multiplier") is not None:
        why = "a fixed noise_multiplier"
    elif options.get("neighbours", "add_remove") != "add_remove":
        why = "replace-one neighbours"
    if why is not None:
        raise MipkitValueError(
            f"The column domain can be estimated privately only from an --epsilon budget, not with {why}: "
            "give the public domain with --domain FILE."
        )
    share = DEFAULT_SHARE if share is None else share
    if not (isinstance(share, (int, float)) and 0.0 < share < 1.0):
        raise MipkitValueError(f"--domain-share must be in (0, 1). Got {share!r} instead.")
    eps = 3.0 if epsilon is None else float(epsilon)
    rng = noise_generator(noise_seed, stream=(_DOMAIN_STREAM,))
    return estimate_domain(data, epsilon=share * eps, delta=share * delta, rng=rng, share=float(share))


def _notes(estimate: Any) -> list[str]:
    if estimate is None:
        return []
    return [
        f"The column domain was estimated with differential privacy ({estimate.share:.0%} of the budget, in "
        "the epsilon above): categories held by few records and values outside the estimated ranges are not "
        "in the synthetic data."
    ]
