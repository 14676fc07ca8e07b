"""Make private synthetic data: DP-WGAN-GP (Pedersen, thesis ch. 3) with a certificate, and its peers.

:class:`DPWGANGP` trains a differentially private WGAN-GP whose per-step sensitivity comes from interval
bounds on the critic's gradients (:mod:`mipkit.synthesize.bounds`), with Poisson sampling, noise calibrated to
``(epsilon, delta)`` or to any mipkit risk target, and exact PLD accounting of the steps that ran; the fitted
synthesizer carries a :class:`SynthesisCertificate`. :func:`make_synthesizer` builds it or a peer (AIM and MST
from private-pgm's ``mbi``, CTGAN from ``ctgan``; the ``synth`` extra). :func:`certified_audit_bounds` puts a
certificate beside the measured risks of :func:`mipkit.workflows.audit_synthetic.run.audit_synthetic`.
Formulas: docs/theory.md sections 3 and 8; docs/synthesize.md.
"""

from __future__ import annotations

import importlib
from typing import Any

_MODULES: dict[str, tuple[str, ...]] = {
    "mipkit.synthesize.dpwgan": ("DPWGANGP",),
    "mipkit.synthesize.bounds": ("CriticBounds", "critic_bounds"),
    "mipkit.synthesize.preprocess": ("TabularEncoder", "infer_domain"),
    "mipkit.synthesize.certificate": (
        "SynthesisCertificate",
        "certificate_curve",
        "certificate_from_dp",
        "certificate_from_record",
        "uncertified",
    ),
    "mipkit.synthesize.audit_bounds": ("certified_audit_bounds",),
    "mipkit.synthesize.peers": ("METHODS", "make_synthesizer"),
    "mipkit.synthesize.quality": ("mode_collapse_share", "fidelity", "utility_auc"),
}
_LAZY: dict[str, str] = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mipkit.synthesize' has no attribute {name!r}")


__all__ = sorted(_LAZY)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
