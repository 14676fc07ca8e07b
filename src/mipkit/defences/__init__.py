"""mipkit.defences: training procedures that lower membership exposure, to be audited as a whole.

- :class:`OptimallySoftLabels`: Pedersen's optimally soft labels (thesis ch. 5.3; docs/theory.md section 7),
  a meta-estimator over a base trainer that learns from soft targets.
- :class:`LabelSmoothing`: traditional label smoothing, the thesis's comparison.
- :func:`leave_out_statistics`, :func:`optimally_soft_targets`: the statistics and targets themselves.

Both defences are scikit-learn classifiers with JSON-able parameters, so the audit fits them by import path
(``mipkit audit --model mipkit.defences.OptimallySoftLabels --params '{"alpha": 0.5, "base": "mlp"}'``) and
every shadow model replays the whole defence.
"""

from mipkit.defences._base import (
    BASE_TRAINERS,
    LeaveOutStatistics,
    leave_out_logits,
    leave_out_statistics,
    optimally_soft_targets,
    resolve_base,
)
from mipkit.defences.smoothing import LabelSmoothing, smoothed_targets
from mipkit.defences.soft_labels import ALPHA_MODES, OptimallySoftLabels
from mipkit.game.trainers import register_trainer

__all__ = [
    "ALPHA_MODES",
    "BASE_TRAINERS",
    "LabelSmoothing",
    "LeaveOutStatistics",
    "OptimallySoftLabels",
    "leave_out_logits",
    "leave_out_statistics",
    "optimally_soft_targets",
    "resolve_base",
    "smoothed_targets",
]

register_trainer(OptimallySoftLabels)  # may be named by import path in an audit (mipkit.game.trainers)
register_trainer(LabelSmoothing)
