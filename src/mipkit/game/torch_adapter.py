"""PyTorch modules as scikit-learn-style trainers (the ``torch`` extra).

:class:`TorchClassifier` wraps a module factory into an estimator with ``fit(X, y)`` / ``predict_proba(X)``
and ``random_state``, so the engine can fit it like any scikit-learn classifier, by import path::

    mipkit audit ... --model mipkit.game.torch_adapter.TorchClassifier \\
        --params '{"module_factory": "mlp", "module_kwargs": {"hidden": [64]}, "epochs": 20}'

Training is deterministic for a given ``random_state`` on the same machine and software: the parameters are
initialised and the mini-batches drawn from generators seeded with it (inside ``torch.random.fork_rng``, so
the global torch RNG of the caller is left untouched), ``torch.use_deterministic_algorithms(True)`` is on
during ``fit`` and the number of intra-op threads is fixed (``n_threads``, default 1). torch is imported
only when a model is fitted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from mipkit._random import spawn_seed
from mipkit._validation import MipkitValueError
from mipkit.game.trainers import allowed_callable, register_trainer

__all__ = ["TorchClassifier", "import_torch", "mlp"]

TORCH_MISSING = "TorchClassifier needs the 'torch' extra: pip install mipkit[torch]"


def import_torch() -> Any:
    """Import torch, or raise :class:`MipkitValueError` saying how to install it."""
    try:
        import torch
    except ImportError:
        raise MipkitValueError(TORCH_MISSING) from None
    return torch


def mlp(
    n_features: int, n_classes: int, *, hidden: tuple[int, ...] | list[int] = (64,), dropout: float = 0.0
):
    """A fully connected ReLU network ``n_features -> hidden... -> n_classes`` (logits out)."""
    torch = import_torch()
    layers: list[Any] = []
    width = int(n_features)
    for h in hidden:
        layers += [torch.nn.Linear(width, int(h)), torch.nn.ReLU()]
        if dropout > 0:
            layers.append(torch.nn.Dropout(float(dropout)))
        width = int(h)
    layers.append(torch.nn.Linear(width, int(n_classes)))
    return torch.nn.Sequential(*layers)


_BUILTIN_FACTORIES: dict[str, Callable] = {"mlp": mlp}


def _resolve_factory(factory: Any) -> Callable:
    if callable(factory):
        return factory
    if isinstance(factory, str):
        if factory in _BUILTIN_FACTORIES:
            return _BUILTIN_FACTORIES[factory]
        return allowed_callable(factory, what="module_factory")  # mipkit's own or allow-listed only
    raise MipkitValueError(
        "The 'module_factory' parameter of TorchClassifier must be a callable "
        "(n_features, n_classes, **kw) -> torch.nn.Module, an import path to one, or 'mlp'. "
        f"Got {factory!r} instead."
    )


@register_trainer
class TorchClassifier(ClassifierMixin, BaseEstimator):
    """Train a PyTorch module with cross-entropy and mini-batch Adam/SGD; scikit-learn classifier API.

    Parameters
    ----------
    module_factory : callable or str
        ``factory(n_features, n_classes, **module_kwargs) -> torch.nn.Module`` returning logits; or an import
        path to such a function (``"pkg.mod:make_net"``); or ``"mlp"`` for :func:`mlp`.
    module_kwargs : dict, optional
        Extra keyword arguments for the factory (JSON-able, e.g. ``{"hidden": [64, 64]}``).
    epochs : int
        Passes over the training data.
    lr : float
        Learning rate.
    batch_size : int
        Mini-batch size (the data are reshuffled every epoch from the seeded generator).
    weight_decay : float
        L2 penalty of the optimiser.
    optimizer : {"adam", "sgd"}
        Optimiser.
    random_state : int or None
        Seed of the initialisation and the batch order; None draws a fresh one per fit.
    n_threads : int or None
        torch intra-op threads during fit and predict (None leaves torch's setting); a fixed count keeps
        results reproducible.

    Attributes
    ----------
    classes_ : ndarray
        Class labels seen in ``fit`` (the module's output columns).
    module_ : torch.nn.Module
        The trained module.
    n_features_in_ : int
    """

    def __init__(
        self,
        module_factory: Any = "mlp",
        *,
        module_kwargs: dict | None = None,
        epochs: int = 20,
        lr: float = 1e-3,
        batch_size: int = 64,
        weight_decay: float = 0.0,
        optimizer: str = "adam",
        random_state: int | None = None,
        n_threads: int | None = 1,
    ):
        self.module_factory = module_factory
        self.module_kwargs = module_kwargs
        self.epochs = epochs
        self.lr = lr
        self.batch_size = batch_size
        self.weight_decay = weight_decay
        self.optimizer = optimizer
        self.random_state = random_state
        self.n_threads = n_threads

    def _threads(self, torch: Any):
        class _Threads:
            def __enter__(inner):
                inner.previous = torch.get_num_threads()
                if self.n_threads is not None:
                    torch.set_num_threads(int(self.n_threads))

            def __exit__(inner, *exc):
                torch.set_num_threads(inner.previous)

        return _Threads()

    def fit(self, X, y):
        """Train a fresh module on ``(X, y)``; returns self."""
        torch = import_torch()
        if self.optimizer not in ("adam", "sgd"):
            raise MipkitValueError(
                "The 'optimizer' parameter of TorchClassifier must be 'adam' or 'sgd'. "
                f"Got {self.optimizer!r} instead."
            )
        X = np.asarray(X, dtype=np.float32)
        y = np.asarray(y)
        if X.shape[0] != y.shape[0] or X.shape[0] == 0:
            raise MipkitValueError(
                f"X and y must have the same non-zero length. Got {X.shape[0]} and {y.shape[0]}."
            )
        self.classes_, codes = np.unique(y, return_inverse=True)
        self.n_features_in_ = int(X.shape[1]) if X.ndim == 2 else int(np.prod(X.shape[1:]))
        seed = self.random_state
        if seed is None:
            seed = spawn_seed(None)
        factory = _resolve_factory(self.module_factory)
        n_in = X.shape[1] if X.ndim == 2 else tuple(X.shape[1:])
        X_t = torch.from_numpy(X)
        y_t = torch.from_numpy(codes.astype(np.int64))
        deterministic_before = torch.are_deterministic_algorithms_enabled()
        with torch.random.fork_rng(devices=[]), self._threads(torch):
            torch.manual_seed(int(seed))
            torch.use_deterministic_algorithms(True)
            try:
                module = factory(n_in, len(self.classes_), **(self.module_kwargs or {}))
                params = module.parameters()
                if self.optimizer == "adam":
                    opt = torch.optim.Adam(params, lr=self.lr, weight_decay=self.weight_decay)
                else:
                    opt = torch.optim.SGD(params, lr=self.lr, weight_decay=self.weight_decay)
                generator = torch.Generator().manual_seed(int(seed))
                loss_fn = torch.nn.CrossEntropyLoss()
                n = X_t.shape[0]
                batch = max(1, int(self.batch_size))
                module.train()
                for _ in range(int(self.epochs)):
                    order = torch.randperm(n, generator=generator)
                    for start in range(0, n, batch):
                        rows = order[start : start + batch]
                        opt.zero_grad()
                        loss = loss_fn(module(X_t[rows]), y_t[rows])
                        loss.backward()
                        opt.step()
            finally:
                torch.use_deterministic_algorithms(deterministic_before)
        module.eval()
        self.module_ = module
        return self

    def predict_proba(self, X) -> np.ndarray:
        """Softmax of the module's logits; columns follow ``classes_``."""
        torch = import_torch()
        X_t = torch.from_numpy(np.asarray(X, dtype=np.float32))
        with torch.no_grad(), self._threads(torch):
            self.module_.eval()
            proba = torch.softmax(self.module_(X_t), dim=1)
        return proba.numpy().astype(np.float64)

    def predict(self, X) -> np.ndarray:
        """The most probable class."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
