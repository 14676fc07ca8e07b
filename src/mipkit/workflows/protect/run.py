"""``protect(data, config)``: train the model, add MIP noise to its parameters, return the release.

The mechanism is :class:`~mipkit.mechanisms.MIPNoise` (docs/protect.md): ``sigma``, the spread of the
parameters over random halves, is given a priori or estimated from fits on halves; the noise is calibrated
to eta; the result holds :meth:`MIPNoise.release() <mipkit.mechanisms.MIPNoise.release>`, the copy to
publish (no fits on halves, no secret half, no estimate of sigma unless asked for).
"""

from __future__ import annotations

from typing import Any

from mipkit._progress import Progress
from mipkit.workflows.protect.config import ProtectConfig
from mipkit.workflows.protect.data import as_protect_data
from mipkit.workflows.protect.result import ProtectResult

__all__ = ["protect"]


def protect(
    data: Any,
    config: ProtectConfig | None = None,
    *,
    progress: Progress | None = None,
) -> ProtectResult:
    """Release a model trained on ``data`` with noise on its parameters, eta-MIP.

    Parameters
    ----------
    data : ProtectData or (X, y)
        The rows (:meth:`ProtectData.from_table <mipkit.workflows.protect.ProtectData.from_table>` reads a
        table, its levels from a public domain).
    config : ProtectConfig, optional
        The model and its noise; default ``ProtectConfig()``.
    progress : Progress, optional
        ``progress("fits on random halves", done, total)`` over the fits that estimate sigma.

    Returns
    -------
    ProtectResult
        The released model, its certificate and their views.
    """
    from mipkit.mechanisms.mip_noise import MIPNoise

    config = ProtectConfig() if config is None else config
    rows = as_protect_data(data)
    wrapper = MIPNoise(config.estimator(), **config.mip_noise_params())
    wrapper.fit(rows.X, rows.y, progress=progress)
    published = wrapper.release(include_estimates=config.include_estimates)
    return ProtectResult(model=published, config=config, n_records=rows.n_records, domain=rows.domain)
