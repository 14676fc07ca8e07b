"""The synthesizers ``mipkit synthesize`` offers, behind one constructor.

=====================  ==========================================================  =========================
``method``             what                                                        needs
=====================  ==========================================================  =========================
``dpwgan-gp``          :class:`~mipkit.synthesizers.dpwgan.DPWGANGP`, spherical noise  ``torch`` extra
``dpwgan-gp-scaled``   the same with the centre-and-scale noise (Thm 3.1.2)          ``torch`` extra
``dpwgan-clip``        :class:`~mipkit.synthesizers.dpwgan_clip.DPWGANClip`: DP-SGD critic  ``torch`` extra
``aim``                :mod:`mipkit.synthesizers.aim` (private-pgm's ``mbi``)          ``synth`` extra
``mst``                :mod:`mipkit.synthesizers.peers_mbi` (private-pgm's ``mbi``)    ``synth`` extra
``ctgan``              CTGAN (Xu et al. 2019) from ``ctgan``: NOT private            ``synth`` extra
=====================  ==========================================================  =========================

DP-CTGAN and PATE-CTGAN (``smartnoise-synth``) pin their own torch and pandas and cannot share an
environment with the ``synth`` extra; the benchmarks run them in a separate virtual environment.

Every synthesizer has ``fit(table)``, ``sample(n_rows)`` and, once fitted, ``certificate_``
(:class:`~mipkit.synthesizers.certificate.SynthesisCertificate`). A risk target instead of ``epsilon``
calibrates DP-WGAN-GP's noise directly; for AIM and MST it is turned into the largest ``epsilon`` (at
``delta``) whose ``(epsilon, delta)``-DP curve meets it (replace-one for an eta target). The methods of
:data:`RESUMABLE` take ``checkpoint=PATH``: a killed fit resumes from it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mipkit._progress import Progress, report
from mipkit._random import spawn_seed
from mipkit._validation import MipkitValueError, check_choice
from mipkit.synthesizers._torch import require
from mipkit.synthesizers.preprocess import MISSING

__all__ = ["METHODS", "RESUMABLE", "CTGANSynthesizer", "epsilon_for_target", "make_synthesizer"]

METHODS: tuple[str, ...] = ("dpwgan-gp", "dpwgan-gp-scaled", "dpwgan-clip", "aim", "mst", "ctgan")
#: The methods whose fit keeps a checkpoint and resumes after a kill (``checkpoint=`` option).
RESUMABLE: tuple[str, ...] = ("dpwgan-gp", "dpwgan-gp-scaled", "aim")


def epsilon_for_target(target: Any, delta: float) -> float:
    """Largest epsilon whose add/remove ``(epsilon, delta)``-DP curve meets ``target`` (an eta target is
    read on the replace-one curve, by group privacy; docs/theory.md section 3)."""
    from scipy import optimize

    from mipkit.accounting import ApproxDP, tradeoff_curve

    def risk(eps: float) -> float:
        # an eta target reads the replace-one curve itself (group privacy of the add/remove guarantee)
        return float(target.risk(tradeoff_curve(ApproxDP(epsilon=eps, delta=delta)))) - float(target.value)

    if risk(1e-6) > 0:
        raise MipkitValueError(
            f"The {target.name!r} target {target.value:g} cannot be met at delta {delta:g} by any epsilon."
        )
    hi = 1.0
    while risk(hi) <= 0 and hi < 1e3:
        hi *= 2.0
    if risk(hi) <= 0:
        return hi
    eps = optimize.brentq(risk, 1e-6, hi, xtol=1e-10)
    while risk(eps) > 0:  # safe side of the root
        eps *= 1.0 - 1e-9
    return float(eps)


class CTGANSynthesizer:
    """CTGAN (Xu, Skoularidou, Cuesta-Infante & Veeramachaneni, NeurIPS 2019) from the ``ctgan`` package.

    Not differentially private: its certificate certifies nothing. Missing categorical values become a
    category of their own and come back as missing.
    """

    method = "ctgan"

    def __init__(
        self,
        *,
        epochs: int = 100,
        batch_size: int = 500,
        random_state: int | None = 0,
        progress: Progress | None = None,
    ) -> None:
        self.epochs, self.batch_size, self.random_state, self.progress = (
            int(epochs),
            int(batch_size),
            random_state,
            progress,
        )

    def fit(self, data: pd.DataFrame) -> CTGANSynthesizer:
        ctgan = require("ctgan", extra="synth", what="CTGAN")
        import torch

        from mipkit.synthesizers.certificate import uncertified

        report(self.progress, "CTGAN training", 0, 1)
        seed = spawn_seed(self.random_state)
        torch.manual_seed(seed)
        np.random.seed(seed)  # noqa: NPY002 - ctgan draws from the global NumPy generator
        table = data.copy()
        self.discrete_ = [c for c in table.columns if not pd.api.types.is_numeric_dtype(table[c])]
        self.dtypes_ = table.dtypes
        for c in self.discrete_:
            table[c] = table[c].astype(object).where(table[c].notna(), MISSING).astype(str)
        self.model_ = ctgan.CTGAN(epochs=self.epochs, batch_size=self.batch_size, verbose=False)
        self.model_.fit(table, discrete_columns=self.discrete_)
        self.certificate_ = uncertified(
            "ctgan", details={"epochs": self.epochs, "batch_size": self.batch_size}
        )
        report(self.progress, "CTGAN training", 1, 1)
        return self

    def sample(self, n_rows: int, *, random_state: int | None = None) -> pd.DataFrame:
        import torch

        seed = spawn_seed(self.random_state if random_state is None else random_state)
        torch.manual_seed(seed)
        np.random.seed(seed)  # noqa: NPY002
        out = self.model_.sample(int(n_rows))
        for c in self.discrete_:
            out[c] = out[c].astype(object).where(out[c].astype(str) != MISSING, None)
        for c in out.columns:
            if c not in self.discrete_ and pd.api.types.is_integer_dtype(self.dtypes_[c]):
                out[c] = np.rint(out[c]).astype(self.dtypes_[c])
        return out


def make_synthesizer(
    method: str,
    *,
    epsilon: float | None = None,
    delta: float = 1e-5,
    risk_target: Any = None,
    domain: dict | None = None,
    random_state: int | None = 0,
    noise_seed: int | None = None,
    progress: Progress | None = None,
    **options: Any,
) -> Any:
    """The synthesizer of ``method`` (module table), unfitted.

    Parameters
    ----------
    method : str
        One of :data:`METHODS`.
    epsilon, delta : float
        The privacy budget (``epsilon`` defaults to 3 when no ``risk_target`` is given; ignored by
        ``ctgan``).
    risk_target : RiskTarget, optional
        Any mipkit risk target instead of ``epsilon``.
    domain : dict, optional
        Public column domain (:class:`~mipkit.synthesizers.preprocess.TabularEncoder`).
    random_state : int, optional
        Seeds what is not protective (initial weights, sampling the synthetic records).
    noise_seed : int, optional
        The DP noise, batches and private selections come from OS entropy unless this is given (then the
        fit is reproducible and not private against anyone who holds it). CTGAN, not private, has none.
    **options
        Passed to the synthesizer (e.g. ``n_generator`` for DP-WGAN-GP, ``rounds`` or ``target`` for AIM,
        ``epochs`` for CTGAN).
    """
    method = check_choice("method", method, METHODS, owner="make_synthesizer")
    if risk_target is not None and epsilon is not None:
        raise MipkitValueError("Give either an epsilon or a risk target, not both.")
    if method.startswith("dpwgan-gp"):
        from mipkit.synthesizers.dpwgan import DPWGANGP

        shape = "scaled" if method == "dpwgan-gp-scaled" else "spherical"
        return DPWGANGP(
            epsilon=epsilon, delta=delta, target=risk_target, noise_shape=shape, domain=domain,
            random_state=random_state, noise_seed=noise_seed, progress=progress, **options,
        )  # fmt: skip
    if method == "dpwgan-clip":
        from mipkit.synthesizers.dpwgan_clip import DPWGANClip

        return DPWGANClip(
            epsilon=epsilon, delta=delta, target=risk_target, domain=domain, random_state=random_state,
            noise_seed=noise_seed, progress=progress, **options,
        )  # fmt: skip
    if method == "ctgan":
        return CTGANSynthesizer(random_state=random_state, progress=progress, **options)
    from mipkit.synthesizers.aim import AIMSynthesizer
    from mipkit.synthesizers.peers_mbi import MSTSynthesizer

    eps = (
        epsilon_for_target(risk_target, delta)
        if risk_target is not None
        else (3.0 if epsilon is None else float(epsilon))
    )
    cls = AIMSynthesizer if method == "aim" else MSTSynthesizer
    return cls(
        epsilon=eps, delta=delta, domain=domain, random_state=random_state, noise_seed=noise_seed,
        progress=progress, **options,
    )  # fmt: skip
