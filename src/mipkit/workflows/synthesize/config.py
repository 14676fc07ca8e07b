"""Every setting of a synthesizer run, checked when built: :class:`SynthesizeConfig`.

What depends on the table (the columns to drop, the column domain, the utility report's target) is
checked by :func:`mipkit.workflows.synthesize.run.synthesize` before anything is fitted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mipkit._validation import MipkitValueError, check_choice, check_interval, check_positive_int
from mipkit.synthesizers.peers import METHODS
from mipkit.workflows._shape import VerbConfig

__all__ = ["MAX_EPSILON", "SynthesizeConfig"]

MAX_EPSILON = 100.0
"""Largest epsilon a synthesizer is run at: above it the guarantee certifies nothing (``e^100`` is about
``10^43``, every certified risk is at its maximum) and ``e^epsilon`` overflows a float from 710 on."""

_OWNER = "synthesize"


def _seed(name: str, value: Any) -> int | None:
    return None if value is None else check_positive_int(name, value, minimum=0, owner=_OWNER)


@dataclass(frozen=True)
class SynthesizeConfig(VerbConfig):
    """The settings of :func:`mipkit.workflows.synthesize.run.synthesize`.

    Parameters
    ----------
    method : {"dpwgan-gp", "dpwgan-gp-scaled", "dpwgan-clip", "aim", "mst", "ctgan"}
        The synthesizer (:mod:`mipkit.synthesizers`; docs/synthesize.md). Default ``"mst"``.
    epsilon : float, optional
        Privacy budget, in ``(0, 100]`` (with ``delta``); default 3 unless ``target``. Not with ``target``.
    delta : float
        In ``(0, 1)``.
    target : RiskTarget, optional
        Any mipkit risk target instead of ``epsilon`` (e.g. ``EtaTarget(0.1)``).
    rows : int, optional
        Synthetic records, ``>= 1`` (default: as many as the table has).
    domain_share : float, optional
        Share of ``epsilon`` and ``delta`` spent on estimating the column domain when the data give no
        public one, in ``(0, 1)``; default :data:`~mipkit.synthesizers.dpdomain.DEFAULT_SHARE` (0.1).
    drop : sequence of str
        Columns left out (identifier-like columns are refused otherwise, unless the domain declares them).
    random_state : int, optional
        Seeds what is not protective: initial weights, drawing the synthetic records.
    noise_seed : int, optional
        The DP noise, secret batches and private selections come from OS entropy unless this is given;
        with it the same ``random_state`` and ``noise_seed`` give the same table, which then is not private
        against anyone who holds ``noise_seed`` (the certificate's ``noise_source`` says which).
    params : mapping
        Options of the synthesizer (e.g. ``{"n_generator": 100}`` for DP-WGAN-GP, ``{"iters": 50}`` for MST).
    quality : bool
        Add the utility report of the synthetic table against the real one
        (:func:`mipkit.synthesizers.quality_report.quality_report`; it reads the real records: not covered by
        the certificate).
    quality_target : str, optional
        A two-class column: the utility report (then on) adds train-on-synthetic / test-on-real.
    id_column : str, optional
        A column that names the records: left out of the model and never released (as are the columns a
        public domain marks ``{"type": "identifier"}``).
    """

    method: str = "mst"
    epsilon: float | None = None
    delta: float = 1e-5
    target: Any = None
    rows: int | None = None
    domain_share: float | None = None
    drop: Sequence[str] = ()
    random_state: int | None = 0
    noise_seed: int | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    quality: bool = False
    quality_target: str | None = None
    id_column: str | None = None

    def check(self) -> None:
        """Refuse a bad setting with one line; ``drop`` becomes a tuple, ``params`` a dict."""
        set_ = object.__setattr__
        check_choice("method", self.method, METHODS, owner=_OWNER)
        if self.epsilon is not None:
            if self.target is not None:
                raise MipkitValueError(
                    f"The 'epsilon' parameter of {_OWNER} cannot be given with the 'target' parameter of "
                    f"{_OWNER}: give one, not both."
                )
            set_(self, "epsilon", self._epsilon())
        set_(self, "delta", check_interval("delta", self.delta, 0.0, 1.0, owner=_OWNER))
        if self.target is not None:
            from mipkit.accounting import RiskTarget

            if not isinstance(self.target, RiskTarget):
                raise MipkitValueError(
                    f"The 'target' parameter of {_OWNER} must be a risk target (e.g. EtaTarget(0.1)). "
                    f"Got {type(self.target).__name__}."
                )
        if self.rows is not None:
            set_(self, "rows", check_positive_int("rows", self.rows, owner=_OWNER))
        if self.domain_share is not None:
            set_(
                self,
                "domain_share",
                check_interval("domain_share", self.domain_share, 0.0, 1.0, owner=_OWNER),
            )
        self._check_names()
        set_(self, "random_state", _seed("random_state", self.random_state))
        set_(self, "noise_seed", _seed("noise_seed", self.noise_seed))

    def _epsilon(self) -> float:
        """``epsilon`` in ``(0, MAX_EPSILON]``, with why the upper end is there."""
        try:
            return check_interval("epsilon", self.epsilon, 0.0, MAX_EPSILON, closed="right", owner=_OWNER)
        except MipkitValueError:
            raise MipkitValueError(
                f"The 'epsilon' parameter of {_OWNER} must be > 0 and at most {MAX_EPSILON:g} (above, "
                f"nothing is certified). Got {self.epsilon!r} instead."
            ) from None

    def _check_names(self) -> None:
        """``drop`` a list of column names, ``params`` a mapping with text keys, the quality flags."""
        set_ = object.__setattr__
        if isinstance(self.drop, str) or not isinstance(self.drop, Sequence):
            raise MipkitValueError(
                f"The 'drop' parameter of {_OWNER} must be a list of column names. Got {self.drop!r} instead."
            )
        set_(self, "drop", tuple(str(c) for c in self.drop))
        if not isinstance(self.params, Mapping) or not all(isinstance(k, str) for k in self.params):
            raise MipkitValueError(
                f"The 'params' parameter of {_OWNER} must be a mapping of option names to values. "
                f"Got {self.params!r} instead."
            )
        set_(self, "params", dict(self.params))
        if not isinstance(self.quality, bool):
            raise MipkitValueError(f"The 'quality' parameter of {_OWNER} must be True or False.")
        for name in ("quality_target", "id_column"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise MipkitValueError(
                    f"The {name!r} parameter of {_OWNER} must be a column name. Got {value!r}."
                )
        if self.id_column is not None and self.id_column == self.quality_target:
            raise MipkitValueError(f"The id column {self.id_column!r} cannot be the quality target.")
