"""Component-wise bounds on a critic's per-record gradients by interval propagation (Pedersen, ch. 3.1).

The critic is a fully connected network ``s_l = W_l x_{l-1} + b_l``, ``x_l = phi_l(s_l)`` for the hidden
layers, with LeakyReLU (or ReLU, slope 0) activations ``phi(s) = s`` for ``s > 0`` and ``alpha s`` otherwise,
and a linear scalar output ``D(x) = W_{L+1} x_L + b_{L+1}``. For every input in a box ``[lo, hi]``
(``[0, 1]^d`` for the preprocessed tables) and the critic's *current* weights, this module bounds each
component of

* the gradient of ``D(x)`` with respect to the parameters (Thm 3.1.1, eqs. 3.8-3.24): forward interval
  propagation of the pre-activations, then backward propagation of intervals with the products of intervals
  of eqs. 3.15-3.18. Eqs. 3.9-3.10 as printed leave out the bias ``b_j`` that eq. 3.6 adds; it is added here
  (docs/theory.md section 10, item 11);
* the gradient of the penalty term ``(||grad_x D(x)||_2 - 1)^2``. With ``phi'' = 0`` (eq. 3.25-3.32),
  ``d GP / d W_l = delta_l p_{l-1}^T`` where ``delta_l = dD/ds_l`` (the backward pass above) and
  ``p_0 = u = 2 (||g|| - 1) g / ||g||``, ``p_l = phi'_l(s_l) * (W_l p_{l-1})`` (a forward tangent pass),
  ``g = grad_x D``; the biases get zero. Every factor is bounded by the same interval arithmetic, so the
  bounds are tight when the input box is a point. The norm bound of Thm 3.1.3 (eq. 3.34) is also computed,
  with operator norms instead of Frobenius norms and the interval range of ``||g||``:
  ``||d GP / d W_l||_F <= 2 max(|n_lo - 1|, |n_hi - 1|) ||delta_l|| prod_{k<l} ||W_k||_2``.

Everything is float64 NumPy on copies of the weights: a few matrix products per step.
Notation follows docs/theory.md section 8.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "CriticBounds",
    "critic_bounds",
    "first_layer_bounds",
    "interval_matvec",
    "interval_mul",
    "interval_outer",
]

Layer = tuple[np.ndarray, np.ndarray]  # (W of shape (out, in), b of shape (out,))


def interval_matvec(w: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of ``W x`` for ``x`` in ``[lo, hi]`` (eqs. 3.9-3.10 without the bias): exact per component."""
    wp, wn = np.maximum(w, 0.0), np.minimum(w, 0.0)
    return wp @ lo + wn @ hi, wp @ hi + wn @ lo


def interval_mul(
    alo: np.ndarray, ahi: np.ndarray, blo: np.ndarray, bhi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of ``a * b`` (elementwise) for ``a`` in ``[alo, ahi]``, ``b`` in ``[blo, bhi]`` (eq. 3.17)."""
    p = np.stack([alo * blo, alo * bhi, ahi * blo, ahi * bhi])
    return p.min(axis=0), p.max(axis=0)


def interval_outer(
    alo: np.ndarray, ahi: np.ndarray, blo: np.ndarray, bhi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of ``a b^T`` for ``a`` in ``[alo, ahi]``, ``b`` in ``[blo, bhi]`` (eqs. 3.15-3.18)."""
    return interval_mul(alo[:, None], ahi[:, None], blo[None, :], bhi[None, :])


def _dphi(s: np.ndarray, slope: float) -> np.ndarray:
    """``phi'(s)``: 1 for ``s > 0``, ``slope`` otherwise (TensorFlow's and torch's convention at 0)."""
    return np.where(s > 0.0, 1.0, slope)


@dataclass(frozen=True)
class CriticBounds:
    """Bounds on one record's gradients, one ``(lo, hi)`` pair per parameter (the critic's parameter order).

    Attributes
    ----------
    d_lo, d_hi : list of ndarray
        Component bounds of ``grad_theta D(x)`` (the real-data term of the WGAN loss is ``-D(x)``).
    gp_lo, gp_hi : list of ndarray
        Component bounds of ``grad_theta (||grad_x D(x)||_2 - 1)^2`` (zero for the biases).
    gp_norm : float
        Thm 3.1.3 bound on ``||grad_theta (||grad_x D(x)|| - 1)^2||_2`` (operator-norm form).
    input_grad_lo, input_grad_hi : ndarray
        Bounds of ``grad_x D(x)``.
    """

    d_lo: list[np.ndarray]
    d_hi: list[np.ndarray]
    gp_lo: list[np.ndarray]
    gp_hi: list[np.ndarray]
    gp_norm: float
    input_grad_lo: np.ndarray
    input_grad_hi: np.ndarray

    def flat(self, which: str = "d") -> tuple[np.ndarray, np.ndarray]:
        """The bounds of ``which`` (``"d"`` or ``"gp"``) as two flat vectors (parameter order)."""
        lo, hi = (self.d_lo, self.d_hi) if which == "d" else (self.gp_lo, self.gp_hi)
        return np.concatenate([a.ravel() for a in lo]), np.concatenate([a.ravel() for a in hi])


def _norm_range(glo: np.ndarray, ghi: np.ndarray) -> tuple[float, float]:
    """Range of ``||g||_2`` for ``g`` in the box: distance of the box to 0, and its farthest corner."""
    near = np.where((glo <= 0.0) & (ghi >= 0.0), 0.0, np.minimum(np.abs(glo), np.abs(ghi)))
    far = np.maximum(np.abs(glo), np.abs(ghi))
    return float(np.linalg.norm(near)), float(np.linalg.norm(far))


def _unit_bounds(glo: np.ndarray, ghi: np.ndarray, nlo: float, nhi: float) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of ``g / ||g||`` given the component box and ``||g||`` in ``[nlo, nhi]``."""
    if nlo > 0.0:
        cand = np.stack([glo / nlo, glo / nhi, ghi / nlo, ghi / nhi])
        return np.clip(cand.min(axis=0), -1.0, 1.0), np.clip(cand.max(axis=0), -1.0, 1.0)
    lo = np.where(glo >= 0.0, 0.0, -1.0)
    hi = np.where(ghi <= 0.0, 0.0, 1.0)
    return lo, hi


def first_layer_bounds(
    w: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray, simplices: Sequence[slice] = ()
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of ``W x + b`` for ``x`` in the box, except that the coordinates of each slice in ``simplices``
    lie on the probability simplex (one-hot records, softmax outputs and their mixtures): there ``W x``
    ranges over the convex hull of the block's columns, ``[min_j W_ij, max_j W_ij]``, exactly."""
    free = np.ones(w.shape[1], dtype=bool)
    slo, shi = b.astype(np.float64).copy(), b.astype(np.float64).copy()
    for sl in simplices:
        free[sl] = False
        block = w[:, sl]
        slo += block.min(axis=1)
        shi += block.max(axis=1)
    mlo, mhi = interval_matvec(w[:, free], lo[free], hi[free])
    return slo + mlo, shi + mhi


def critic_bounds(
    layers: Sequence[Layer],
    slopes: Sequence[float],
    lower: np.ndarray,
    upper: np.ndarray,
    simplices: Sequence[slice] = (),
) -> CriticBounds:
    """Interval bounds on one record's critic gradients for every input in ``[lower, upper]``.

    Parameters
    ----------
    layers : sequence of (W, b)
        The ``L + 1`` linear layers, ``W`` of shape ``(out, in)`` as in ``torch.nn.Linear``; the last has
        one output.
    slopes : sequence of float
        The negative slope ``alpha`` in ``[0, 1]`` of each of the ``L`` hidden activations (0: ReLU).
    lower, upper : ndarray
        The input box.
    simplices : sequence of slice, optional
        Input blocks that lie on the probability simplex (one-hot categorical columns; their coordinates
        must also be within ``[lower, upper]``): the first layer's pre-activations are bounded over the
        simplex instead of the box (:func:`first_layer_bounds`), which is exact and much tighter.

    Returns
    -------
    CriticBounds
        Bounds in the parameter order ``W_1, b_1, ..., W_{L+1}, b_{L+1}``.
    """
    ws = [np.asarray(w, dtype=np.float64) for w, _ in layers]
    bs = [np.asarray(b, dtype=np.float64) for _, b in layers]
    n_hidden = len(ws) - 1
    if len(slopes) != n_hidden:
        raise ValueError(f"{n_hidden} hidden layers need {n_hidden} slopes; got {len(slopes)}.")
    xlo, xhi = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    xs, dphis = _forward(ws, bs, slopes, (xlo, xhi), simplices)
    deltas = _backward(ws, dphis)
    in_lo, in_hi = interval_matvec(ws[0].T, *deltas[0])
    d_lo: list[np.ndarray] = []
    d_hi: list[np.ndarray] = []
    for ell in range(n_hidden + 1):
        wlo, whi = interval_outer(*deltas[ell], *xs[ell])
        d_lo += [wlo, deltas[ell][0].copy()]
        d_hi += [whi, deltas[ell][1].copy()]
    gp_lo, gp_hi, gp_norm = _penalty(ws, bs, deltas, dphis, (in_lo, in_hi))
    return CriticBounds(
        d_lo=d_lo,
        d_hi=d_hi,
        gp_lo=gp_lo,
        gp_hi=gp_hi,
        gp_norm=gp_norm,
        input_grad_lo=in_lo,
        input_grad_hi=in_hi,
    )


Interval = tuple[np.ndarray, np.ndarray]


def _forward(
    ws: list[np.ndarray],
    bs: list[np.ndarray],
    slopes: Sequence[float],
    box: Interval,
    simplices: Sequence[slice],
) -> tuple[list[Interval], list[Interval]]:
    """Forward pass (eqs. 3.8-3.11, with the bias): bounds of each layer's input ``x_l`` (the box first) and
    of each hidden activation's derivative ``phi'_l``."""
    xs = [box]
    dphis = []
    for ell in range(len(ws) - 1):
        if ell == 0:
            slo, shi = first_layer_bounds(ws[0], bs[0], *box, simplices)
        else:
            slo, shi = interval_matvec(ws[ell], *xs[-1])
            slo, shi = slo + bs[ell], shi + bs[ell]
        a = float(slopes[ell])
        xs.append((np.where(slo > 0, slo, a * slo), np.where(shi > 0, shi, a * shi)))
        dphis.append((_dphi(slo, a), _dphi(shi, a)))
    return xs, dphis


def _backward(ws: list[np.ndarray], dphis: list[Interval]) -> list[Interval]:
    """Backward pass for ``dD/dtheta`` (eqs. 3.12-3.24): bounds of ``delta_l = dD/ds_l`` per layer."""
    n_hidden = len(ws) - 1
    deltas: list[Interval] = [None] * (n_hidden + 1)  # type: ignore[list-item]
    deltas[n_hidden] = (np.ones(1), np.ones(1))
    for ell in range(n_hidden, 0, -1):
        dlo, dhi = deltas[ell]
        glo, ghi = interval_matvec(ws[ell].T, dlo, dhi)  # dD/dx_{ell} (hidden layer ell, 0-based ell-1)
        deltas[ell - 1] = interval_mul(glo, ghi, *dphis[ell - 1])
    return deltas


def _penalty(
    ws: list[np.ndarray],
    bs: list[np.ndarray],
    deltas: list[Interval],
    dphis: list[Interval],
    in_grad: Interval,
) -> tuple[list[np.ndarray], list[np.ndarray], float]:
    """Bounds of the penalty term's gradient, ``u = 2 (||g|| - 1) g / ||g||``, ``p_0 = u``,
    ``p_l = phi'_l * (W_l p_{l-1})`` (``in_grad``: the bounds of ``g``), and the bound on its norm."""
    n_hidden = len(ws) - 1
    nlo, nhi = _norm_range(*in_grad)
    tlo, thi = _unit_bounds(*in_grad, nlo, nhi)
    elo, ehi = np.full_like(tlo, 2.0 * (nlo - 1.0)), np.full_like(thi, 2.0 * (nhi - 1.0))
    p = interval_mul(elo, ehi, tlo, thi)
    gp_lo: list[np.ndarray] = []
    gp_hi: list[np.ndarray] = []
    e_abs = 2.0 * max(abs(nlo - 1.0), abs(nhi - 1.0))
    op_prod = 1.0  # prod_{k < l} ||W_k||_2
    norms_sq = 0.0
    for ell in range(n_hidden + 1):
        wlo, whi = interval_outer(*deltas[ell], *p)
        gp_lo += [wlo, np.zeros_like(bs[ell])]
        gp_hi += [whi, np.zeros_like(bs[ell])]
        delta_abs = np.maximum(np.abs(deltas[ell][0]), np.abs(deltas[ell][1]))
        norms_sq += (e_abs * float(np.linalg.norm(delta_abs)) * op_prod) ** 2
        op_prod *= float(np.linalg.norm(ws[ell], ord=2))
        if ell < n_hidden:
            p = interval_mul(*interval_matvec(ws[ell], *p), *dphis[ell])
    return gp_lo, gp_hi, float(np.sqrt(norms_sq))


def thesis_penalty_bound(layers: Sequence[Layer], slopes: Sequence[float], grad_norm: float) -> list[float]:
    """Thm 3.1.3 as printed (eq. 3.34), per weight matrix, for a given ``||grad_x D(x)||``.

    ``2 max(||grad_x D|| - 1, 1) prod_{k != l} ||W_k||_F prod_{k <= L} ||phi'_k||_F``, with
    ``||phi'_k||_F <= sqrt(n_k)`` (every derivative at most 1). Kept for comparison with
    :func:`critic_bounds`' operator-norm form, which it never undercuts.
    """
    ws = [np.asarray(w, dtype=np.float64) for w, _ in layers]
    fro = [float(np.linalg.norm(w)) for w in ws]
    phi = float(np.prod([np.sqrt(w.shape[0]) for w in ws[:-1]]))
    lead = 2.0 * max(grad_norm - 1.0, 1.0)
    out = []
    for ell in range(len(ws)):
        others = float(np.prod([f for k, f in enumerate(fro) if k != ell]))
        out.append(lead * others * phi)
    return out
