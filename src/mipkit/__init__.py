"""mipkit: membership-inference and re-identification risk for releases built from personal records.

Three parts, one direction of data flow (see ``docs`` and the README):

* ``mipkit.accounting`` (certify): privacy guarantees as trade-off curves, turned into operational risk,
  and noise calibrated to a risk target;
* ``mipkit.mechanisms`` (protect): mechanisms that reach a risk target;
* ``mipkit.game``, ``mipkit.attacks``, ``mipkit.metrics``, ``mipkit.report`` (audit): what attackers
  achieve empirically, with confidence intervals.
"""

from mipkit._validation import MipkitValueError

__version__ = "0.1.0"

__all__ = ["MipkitValueError", "__version__"]
