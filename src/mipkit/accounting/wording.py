"""A mechanism record in words: what a figure title or a plain paragraph calls the released mechanism.

Only the record's own parameters are named (never the accountant's settings such as a PLD's grid), in the
terms a privacy officer reads: ``describe_mechanism({"name": "pure_dp", "epsilon": 1.0})`` is
``"epsilon = 1 differential privacy (pure DP)"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["describe_mechanism"]


def _g(x: Any) -> str:
    return f"{x:g}" if isinstance(x, (int, float)) and not isinstance(x, bool) else str(x)


def describe_mechanism(record: Mapping[str, Any]) -> str:
    """The mechanism of a record's ``to_dict()`` in words, with its parameters and nothing else.

    Parameters
    ----------
    record : mapping
        ``{"name": ..., <parameter>: <value>, ...}`` as :meth:`Mechanism.to_dict` writes it.

    Returns
    -------
    str
        For example ``"DP-SGD with noise multiplier 1.1, sampling rate 0.008 and 3750 steps"``.
    """
    name = record.get("name", "")
    if name == "pure_dp":
        return f"epsilon = {_g(record['epsilon'])} differential privacy (pure DP)"
    if name == "approx_dp":
        return f"(epsilon = {_g(record['epsilon'])}, delta = {_g(record['delta'])}) differential privacy"
    if name == "gaussian":
        return (
            f"the Gaussian mechanism with noise standard deviation {_g(record['sigma'])} "
            f"and sensitivity {_g(record['sensitivity'])}"
        )
    if name == "laplace":
        scale, sens = _g(record["scale"]), _g(record["sensitivity"])
        return f"the Laplace mechanism with scale {scale} and sensitivity {sens}"
    if name == "gdp":
        return f"mu = {_g(record['mu'])} Gaussian differential privacy"
    if name == "zcdp":
        return f"rho = {_g(record['rho'])} zero-concentrated differential privacy"
    if name == "rdp":
        return "a Renyi differential privacy guarantee"
    if name == "subsampled_gaussian":
        return (
            f"DP-SGD with noise multiplier {_g(record['noise_multiplier'])}, sampling rate "
            f"{_g(record['sample_rate'])} and {_g(record['steps'])} steps"
        )
    if name == "heterogeneous_subsampled_gaussian":
        return "DP-SGD with noise that changes during training"
    if name == "composed":
        parts = record.get("mechanisms") or []
        return f"{len(parts)} mechanisms run one after another"
    return str(name) or "a mechanism"
