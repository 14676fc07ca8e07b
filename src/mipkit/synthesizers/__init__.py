"""Make private synthetic data: DP-WGAN-GP (Pedersen, thesis ch. 3) with a certificate, and its peers.

:class:`DPWGANGP` trains a differentially private WGAN-GP whose per-step sensitivity comes from interval
bounds on the critic's gradients (:mod:`mipkit.synthesizers.bounds`), with Poisson sampling, noise calibrated
to ``(epsilon, delta)`` or to any mipkit risk target, and exact PLD accounting of the steps that ran; the
fitted synthesizer carries a :class:`SynthesisCertificate`. :class:`DPWGANClip` trains a conditional WGAN-GP
whose critic learns by DP-SGD (per-record clipping, penalty included). :func:`make_synthesizer` builds either
or a peer (AIM and MST from private-pgm's ``mbi``, CTGAN from ``ctgan``; the ``synth`` extra).
:func:`certified_audit_bounds` puts a certificate beside the measured risks of
:func:`mipkit.workflows.audit_synthetic.run.audit_synthetic`. Formulas: docs/theory.md sections 3, 8 and 8a;
docs/synthesize.md.
"""

from __future__ import annotations

from mipkit._lazy import lazy_exports

# Lazy: the synthesizers pull in torch, scipy and the synth extra; `import mipkit.synthesizers` loads none of
# them (module -> the names it exports).
_MODULES: dict[str, str] = {
    "dpwgan": "DPWGANGP",
    "dpwgan_clip": "DPWGANClip",
    "bounds": "CriticBounds critic_bounds",
    "preprocess": "TabularEncoder infer_domain",
    "certificate": "SynthesisCertificate certificate_curve certificate_from_dp certificate_from_record "
    "uncertified",
    "audit_bounds": "certified_audit_bounds",
    "peers": "METHODS make_synthesizer",
    "quality": "mode_collapse_share fidelity utility_auc",
}
_LAZY, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())

__all__ = sorted(_LAZY)
