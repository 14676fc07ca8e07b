"""mipkit: membership-inference and re-identification risk for releases built from personal records.

Every verb has one shape (:mod:`mipkit.workflows._shape`): a frozen config checked when built,
``verb(data, config) -> Result``, and a frozen result with ``summary``, ``to_dict``, ``to_frame`` and
``write``. The eleven verbs, their configs and results are importable from here:

>>> import mipkit
>>> result = mipkit.risk(mipkit.Guarantee(epsilon=1.0, delta=1e-5), mipkit.RiskConfig())

``import mipkit`` is light (it imports neither numpy nor any subpackage), so that the command line starts
fast; each name loads its module on first access.
"""

from __future__ import annotations

from mipkit._lazy import lazy_exports

__version__ = "0.1.0"

VERBS = (
    "risk",
    "calibrate",
    "protect",
    "audit_noise",
    "audit",
    "audit_fitted",
    "audit_scores",
    "audit_synthetic",
    "train_private",
    "audit_one_run",
    "synthesize",
)


def _camel(verb: str) -> str:
    return "".join(part.capitalize() for part in verb.split("_"))


_EXPORTS = {f"workflows.{verb}": f"{verb} {_camel(verb)}Config {_camel(verb)}Result" for verb in VERBS} | {
    "_validation": "MipkitValueError"
}
_EXPORTS["workflows.audit_fitted"] += " FittedRelease"  # the data of the verbs that take several inputs
_EXPORTS["workflows.audit_scores"] += " Predictions ModelOutputs"
_EXPORTS["workflows.protect"] += " ProtectData"
_EXPORTS["workflows.audit_synthetic"] += " SyntheticRelease"
_EXPORTS["workflows.synthesize"] += " PrivateTable"
_EXPORTS["workflows.risk"] += " Guarantee"
_EXPORTS["workflows.calibrate"] += " NoiseFamily"
_EXPORTS["workflows.train_private"] += " TrainingTable"
_EXPORTS["workflows.audit"] += " LabelledTable"

_lazy, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = ["VERBS", "__version__", *sorted(_lazy)]
