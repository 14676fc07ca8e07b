"""Make private synthetic data: a :class:`PrivateTable` in, a :class:`SynthesizeResult` out.

:func:`synthesize` fits one synthesizer of :mod:`mipkit.synthesizers` (DP-WGAN-GP, its centre-and-scale
variant,
AIM, MST or the non-private CTGAN), samples ``rows`` records and returns the synthetic table with its
certificate; :meth:`SynthesizeResult.write` writes ``synthetic.csv`` and ``certificate.json`` into a folder.
The privacy is set by ``epsilon`` (with ``delta``) or by any mipkit risk target (docs/synthesize.md).

The column domain is public (``PrivateTable(table, domain)``, declared by the user and used as is) or
estimated with differential privacy from a share of ``epsilon`` and ``delta``
(:mod:`mipkit.synthesizers.dpdomain`; the synthesizer gets the rest and the certificate composes both); it is
never read from the data silently. Identifier-like columns and infinite values are refused before any
fitting, and integer and bool columns keep their type.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pandas as pd

from mipkit._progress import Progress
from mipkit._validation import MipkitValueError
from mipkit.synthesizers.certificate import with_domain
from mipkit.synthesizers.tablecheck import check_finite, check_identifiers, drop_columns, restore_types
from mipkit.workflows.synthesize.config import SynthesizeConfig
from mipkit.workflows.synthesize.result import SynthesizeResult
from mipkit.workflows.synthesize.table import PrivateTable

__all__ = ["synthesize"]

#: Key of the domain estimate's stream of a ``noise_seed`` (apart from the synthesizer's own).
_DOMAIN_STREAM = 0x646F6D61696E  # "domain"


def _checked(data: PrivateTable, config: SynthesizeConfig) -> pd.DataFrame:
    """The table without the dropped columns, refused when it cannot be synthesized as it is: empty,
    a column all missing, words among a column's numbers, an infinite value, an identifier-like column,
    or a utility-report target that is not one of its columns."""
    from mipkit.data.io import check_not_mostly_numeric
    from mipkit.synthesizers.preprocess import infer_domain

    table = drop_columns(data.table, [*config.drop, *_id_columns(data, config)] or None)
    infer_domain(table, max_categories=len(table) + 1)  # refuses empty tables and all-missing columns
    for column in table.columns:  # a number column with a typo would become one category per value
        if not pd.api.types.is_numeric_dtype(table[column]):
            check_not_mostly_numeric(table[column], str(column))
    check_finite(table)
    check_identifiers(table, declared=_public_domain(data, config.id_column) or ())
    if config.quality_target is not None and config.quality_target not in table.columns:
        raise MipkitValueError(
            f"The 'quality_target' parameter of synthesize {config.quality_target!r} is not a column of the "
            "table."
        )
    return table


def _id_columns(data: PrivateTable, config: SynthesizeConfig) -> list[str]:
    """The columns that name records: ``config.id_column`` and those the public domain marks so (each
    must be a column of the table)."""
    from mipkit.data.domain import IDENTIFIER

    marked = [str(c) for c, spec in (data.domain or {}).items() if spec == IDENTIFIER]
    named = [] if config.id_column is None else [config.id_column]
    if config.id_column is not None and config.id_column not in set(map(str, data.table.columns)):
        raise MipkitValueError(
            f"The id column {config.id_column!r} is not a column of the table; its columns: "
            f"{list(map(str, data.table.columns))}."
        )
    return [c for c in dict.fromkeys([*named, *marked]) if c in set(map(str, data.table.columns))]


def _public_domain(data: PrivateTable, id_column: str | None = None) -> dict | None:
    """The public domain without the entries of the id columns (those columns are left out of the
    table)."""
    from mipkit.data.domain import IDENTIFIER

    if data.domain is None:
        return None
    return {str(c): s for c, s in data.domain.items() if s != IDENTIFIER and str(c) != id_column}


def _domain(table: pd.DataFrame, data: PrivateTable, config: SynthesizeConfig) -> dict[str, Any]:
    """The column domain and the budget left for the synthesizer: ``domain``, ``train`` (the table
    conformed to it), ``epsilon``, ``delta``, ``source`` (where the domain came from) and ``estimate``
    (the private estimate, or None)."""
    from mipkit.synthesizers.preprocess import check_domain, conform

    out: dict[str, Any] = {"epsilon": config.epsilon, "delta": config.delta, "train": table, "estimate": None}
    out["domain"] = None
    if data.domain is not None:
        if config.domain_share is not None:
            raise MipkitValueError("Give a public domain (--domain FILE) or --domain-share, not both.")
        out["domain"] = check_domain(_public_domain(data, config.id_column) or {}, table)
        out["train"] = conform(table, out["domain"])
        out["source"] = {"source": "public file", "epsilon": 0.0}
    if config.method == "ctgan":  # not private: it reads its own encoding from the data whatever the domain
        out["source"] = {"source": "data", "epsilon": None}
    elif data.domain is None:
        estimate = _estimate_domain(table, config)
        out.update(domain=estimate.domain, train=conform(table, estimate.domain, estimate.fill))
        out["epsilon"] = (3.0 if config.epsilon is None else float(config.epsilon)) - estimate.epsilon
        out["delta"] = float(config.delta) - estimate.delta
        out.update(source=estimate.summary(), estimate=estimate)
    return out


def synthesize(
    data: PrivateTable | pd.DataFrame,
    config: SynthesizeConfig | None = None,
    *,
    progress: Progress | None = None,
    checkpoint: str | Path | None = None,
) -> SynthesizeResult:
    """Fit ``config.method`` on the private table and sample ``config.rows`` records (default: as many as
    the table has).

    Parameters
    ----------
    data : PrivateTable or DataFrame
        The private table and the public domain of its columns (a DataFrame alone: no public domain).
    config : SynthesizeConfig, optional
        Every setting (default: ``SynthesizeConfig()``, MST at epsilon 3).
    progress : Progress, optional
        ``progress(stage, done, total)`` while fitting (the method's steps: ``"MST optimisation steps"``,
        ``"AIM rounds"``, ``"DP-WGAN-GP generator steps"``, ``"CTGAN training"``).
    checkpoint : path, optional
        A file for the training state of the methods that resume
        (:data:`~mipkit.synthesizers.peers.RESUMABLE`):
        a fit killed part-way and started again with the same data and parameters continues from it and
        gives the result of an uninterrupted run. Removed when the fit ends; the other methods ignore it.

    Returns
    -------
    SynthesizeResult
        ``summary()`` the DPIA paragraph, ``write(out)`` the folder with ``synthetic.csv`` and
        ``certificate.json``.
    """
    from mipkit.synthesizers.peers import RESUMABLE, make_synthesizer

    c = SynthesizeConfig() if config is None else config
    data = data if isinstance(data, PrivateTable) else PrivateTable(data)
    table = _checked(data, c)
    dom = _domain(table, data, c)
    options = dict(c.params)
    if checkpoint is not None and c.method in RESUMABLE:
        options["checkpoint"] = checkpoint
    clock = time.perf_counter()
    try:
        synth = make_synthesizer(
            c.method, epsilon=dom["epsilon"], delta=dom["delta"], risk_target=c.target, domain=dom["domain"],
            random_state=c.random_state, noise_seed=c.noise_seed, progress=progress, **options,
        )  # fmt: skip
    except TypeError as err:  # an option the synthesizer does not take
        raise MipkitValueError(f"The 'params' parameter of synthesize: {err}.") from None
    synth.fit(dom["train"])
    before = float(getattr(synth, "resumed_seconds_", 0.0))  # a resumed fit: the killed run's time too
    fit_seconds = time.perf_counter() - clock + before
    n_rows = len(table) if c.rows is None else c.rows
    dtypes = {str(col): table[col].dtype for col in table.columns}
    synthetic = restore_types(synth.sample(n_rows), dtypes, dom["domain"])
    estimate = dom["estimate"]
    quality = _quality(table, synthetic, c)  # part of the run's time
    return SynthesizeResult(
        method=c.method,
        synthetic=synthetic,
        certificate=with_domain(
            synth.certificate_,
            dom["source"],
            None if estimate is None else estimate.record(),
            _notes(estimate),
        ),
        seconds=time.perf_counter() - clock + before,
        fit_seconds=fit_seconds,
        delta=float(c.delta),
        resumed_from=int(getattr(synth, "resumed_from_", 0)),
        quality=quality,
    )


def _quality(table: pd.DataFrame, synthetic: pd.DataFrame, config: SynthesizeConfig) -> dict | None:
    """The utility report when asked for (it reads the real records: not covered by the certificate)."""
    if not config.quality and config.quality_target is None:
        return None
    from mipkit.synthesizers.quality_report import quality_report

    real = table[list(synthetic.columns)]
    return quality_report(real, synthetic, target=config.quality_target, seed=config.random_state)


def _estimate_domain(table: pd.DataFrame, config: SynthesizeConfig) -> Any:
    """The domain estimated with ``domain_share`` of ``(epsilon, delta)``, its noise from the protective
    stream (:func:`mipkit._random.noise_generator`); refused where the budget is not an ``epsilon`` to split
    (one line naming ``--domain FILE``)."""
    from mipkit._random import noise_generator
    from mipkit.synthesizers.dpdomain import DEFAULT_SHARE, estimate_domain

    why = None
    if config.target is not None:
        why = "a --target-risk calibration"
    elif config.params.get("noise_multiplier") is not None:
        why = "a fixed noise_multiplier"
    elif config.params.get("neighbours", "add_remove") != "add_remove":
        why = "replace-one neighbours"
    if why is not None:
        raise MipkitValueError(
            f"The column domain can be estimated privately only from an --epsilon budget, not with {why}: "
            "give the public domain with --domain FILE."
        )
    share = DEFAULT_SHARE if config.domain_share is None else config.domain_share
    eps = 3.0 if config.epsilon is None else float(config.epsilon)
    rng = noise_generator(config.noise_seed, stream=(_DOMAIN_STREAM,))
    return estimate_domain(
        table, epsilon=share * eps, delta=share * config.delta, rng=rng, share=float(share)
    )


def _notes(estimate: Any) -> list[str]:
    if estimate is None:
        return []
    return [
        f"The column domain was estimated with differential privacy ({estimate.share:.0%} of the budget, in "
        "the epsilon above): categories held by few records and values outside the estimated ranges are not "
        "in the synthetic data."
    ]
