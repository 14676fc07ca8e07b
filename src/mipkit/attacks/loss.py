"""The LOSS (loss-threshold) attack of Yeom et al. 2018.

Yeom, Giacomelli, Fredrikson, Jha, "Privacy Risk in Machine Learning: Analyzing the Connection to
Overfitting" (CSF 2018), Sec. 3.2: a record is called a member when the target model's loss on it is below a
threshold (their Algorithm 1 uses the expected training loss). As a score for ROC analysis the threshold is
left free: ``score = -loss`` (lower loss = more likely a member).
"""

from __future__ import annotations

import numpy as np

from mipkit._validation import check_finite_array

__all__ = ["loss_attack", "loss_threshold_guesses"]


def loss_attack(target_loss) -> np.ndarray:
    """Membership score ``-loss`` of the LOSS attack (Yeom et al. 2018).

    Parameters
    ----------
    target_loss : array of shape (n,)
        Loss of the target model on each record, e.g. :func:`mipkit.attacks.cross_entropy_loss`.

    Returns
    -------
    ndarray of shape (n,)
        Higher = more likely a member.
    """
    loss = check_finite_array("target_loss", target_loss, ndim=1, owner="loss_attack")
    return -loss


def loss_threshold_guesses(target_loss, *, threshold: float) -> np.ndarray:
    """Hard guesses of Yeom et al.'s Algorithm 1: member (1) iff ``loss < threshold``.

    Yeom et al. set ``threshold`` to the average training loss of the target model; any threshold chosen
    without looking at the targets' memberships gives an unbiased accuracy (see
    :func:`mipkit.stats.eta_from_guesses`).
    """
    loss = check_finite_array("target_loss", target_loss, ndim=1, owner="loss_threshold_guesses")
    t = float(check_finite_array("threshold", [threshold], owner="loss_threshold_guesses")[0])
    return (loss < t).astype(int)
