"""A risk target from its parts: a name, a value and the parameters the name needs.

:data:`TARGET_PARAMETERS` says which parameters each target takes (those of the target classes of
:mod:`mipkit.accounting.targets`); :func:`risk_target_from` builds the target, refusing a parameter the
target does not take and a missing one, so nothing given is silently ignored. ``calibrate`` and
``train_private`` take their targets this way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mipkit._validation import MipkitValueError

if TYPE_CHECKING:  # pragma: no cover
    from mipkit.accounting.targets import RiskTarget

__all__ = ["TARGET_PARAMETERS", "check_target_parameters", "risk_target_from"]

#: Target name -> the parameters it takes.
TARGET_PARAMETERS: dict[str, tuple[str, ...]] = {
    "eta": (),
    "advantage": (),
    "tpr-at-fpr": ("fpr",),
    "success": ("baseline",),
    "precision": ("base_rate", "recall"),
    "epsilon": ("delta",),
}


def check_target_parameters(
    name: str | None, params: Mapping[str, Any], names: Mapping[str, str] | None = None
) -> None:
    """Refuse each parameter given (not None) in ``params`` that target ``name`` does not take (any, for
    ``name=None``)."""
    say = dict(names or {})
    wanted = TARGET_PARAMETERS.get(name or "", ())
    for key, value in params.items():
        if value is not None and key not in wanted:
            users = [t for t, opts in TARGET_PARAMETERS.items() if key in opts]
            raise MipkitValueError(
                f"{say.get(key, key)} applies only to {say.get('target', 'target')} {' / '.join(users)}."
            )


def risk_target_from(
    name: str,
    value: Any,
    params: Mapping[str, Any],
    *,
    owner: str,
    names: Mapping[str, str] | None = None,
) -> RiskTarget:
    """The risk target ``name`` at ``value`` with its parameters from ``params``.

    Parameters
    ----------
    name : str
        A key of :data:`TARGET_PARAMETERS`.
    value : float
        The risk level (checked by the target).
    params : mapping
        ``fpr``, ``baseline``, ``base_rate``, ``recall``, ``delta`` (None: not given): the target's must be
        given, no other.
    owner : str
        Who asks, for the messages.
    names : mapping, optional
        How the messages name ``target``, ``value`` and each parameter (a command line's flags); default
        their own names.
    """
    from mipkit.accounting.targets import target_from_dict

    say = dict(names or {})
    tgt = name
    if tgt not in TARGET_PARAMETERS:
        raise MipkitValueError(
            f"The {say.get('target', 'target')} of {owner} must be one of {', '.join(TARGET_PARAMETERS)}. "
            f"Got {name!r} instead."
        )
    check_target_parameters(tgt, params, names)
    for key in TARGET_PARAMETERS[tgt]:
        if params.get(key) is None:
            raise MipkitValueError(f"{say.get('target', 'target')} {tgt} needs {say.get(key, key)}.")
    if value is None:
        raise MipkitValueError(f"{say.get('target', 'target')} {tgt} needs {say.get('value', 'value')}.")
    return target_from_dict({"name": tgt, "value": value, **{k: params[k] for k in TARGET_PARAMETERS[tgt]}})
