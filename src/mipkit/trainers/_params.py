"""The ``__init__`` of the scikit-learn trainers: store every parameter, unchanged, under its own name.

scikit-learn's convention (``get_params``, ``clone``): an estimator's ``__init__`` only stores its arguments.
:func:`store_params` does that once for every trainer, from the ``locals()`` of its ``__init__``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping
from typing import Any

__all__ = ["init_param_names", "store_params"]


@functools.cache
def init_param_names(cls: type) -> tuple[str, ...]:
    """The named parameters of the ``__init__`` methods of ``cls`` and its bases.

    Parameters
    ----------
    cls : type
        An estimator class.

    Returns
    -------
    tuple of str
        Those a base's ``__init__`` declares first, in its order, then those each subclass adds, in its
        order (the order in which ``__init__`` calling its parent's would store them).
    """
    names: dict[str, None] = {}
    for klass in reversed(cls.__mro__):
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        for p in inspect.signature(init).parameters.values():
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                names.setdefault(p.name)
    return tuple(names)


def store_params(estimator: Any, args: Mapping[str, Any]) -> None:
    """Store the ``__init__`` arguments of ``estimator`` as its attributes, unchanged.

    Parameters
    ----------
    estimator : object
        The estimator being built (``self`` of its ``__init__``).
    args : mapping
        ``locals()`` of that ``__init__``: every parameter of :func:`init_param_names` found in it is stored.
    """
    for name in init_param_names(type(estimator)):
        if name in args:
            setattr(estimator, name, args[name])
