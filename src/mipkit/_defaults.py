"""The rates every risk report uses unless told otherwise, in one place below every layer.

Attack results (:mod:`mipkit.metrics`), certified bounds (:mod:`mipkit.accounting`), certificates
(:mod:`mipkit.trainers`) and the command lines report TPR at the same false-positive rates and precision at
the same member fractions, so that a measured and a certified number can be read side by side.
"""

from __future__ import annotations

__all__ = ["DEFAULT_BASE_RATES", "DEFAULT_FPRS"]

#: False-positive rates at which TPR (measured or certified) is reported.
DEFAULT_FPRS: tuple[float, ...] = (0.001, 0.01, 0.1)
#: Member fractions for skews 1:1, 1:10, 1:100 and 1:1000 (members : non-members).
DEFAULT_BASE_RATES: tuple[float, ...] = (0.5, 1 / 11, 1 / 101, 1 / 1001)
