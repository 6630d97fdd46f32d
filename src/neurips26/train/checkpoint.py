"""Load-or-train: a notebook's second run loads the weights its first run trained.

``trained(name, config, build, train, package=...)`` stores a model's ``state_dict`` and training
:class:`~neurips26.train.fit.History` through :func:`neurips26.cache.cached`, keyed by ``config``, the
library version and the source fingerprint of ``package`` (and of any further packages named), so
editing the model's or the training code retrains instead of loading stale weights.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from torch import nn

from neurips26.cache import cache_key, cached
from neurips26.train.fit import History


class Trained(NamedTuple):
    """A trained (or loaded) model and the history of the run that trained it."""

    model: nn.Module
    history: History | None


def trained(
    name: str,
    config: Any,
    build: Callable[[], nn.Module],
    train: Callable[[nn.Module], History | None],
    *,
    package: str | tuple[str, ...],
    verbose: bool = True,
) -> Trained:
    """Return ``build()`` with the weights of ``train(build())`` for ``config``, training only when needed.

    ``build()`` makes a fresh model (its architecture must follow from ``config``); ``train(model)``
    trains it in place and returns its :class:`History` (or None). On a cache hit, ``build()`` runs and
    the stored weights are loaded strictly (a changed architecture fails loudly); ``train`` is not
    called, and the stored history comes back. ``package`` names the library package(s) whose source
    shapes the result, e.g. ``("neurips26.sdm", "neurips26.nn", "neurips26.train")``; a change to any
    of them changes the key. Weights are stored on the CPU and loaded onto ``build()``'s device.
    """
    if not callable(build) or not callable(train):
        raise TypeError("build and train must be callables: build() -> model, train(model) -> History | None")
    packages = (package,) if isinstance(package, str) else tuple(package)
    if not packages or not all(isinstance(p, str) and p.startswith("neurips26") for p in packages):
        raise ValueError(f"package must name one or more neurips26 packages; got {package!r}")
    # The first package's fingerprint goes in through cached(); the others' through the keyed config.
    keyed = {"config": config, "sources": [cache_key("source", None, p) for p in packages[1:]]}
    fresh: list[nn.Module] = []

    def compute() -> dict[str, Any]:
        model = _build(build)
        history = train(model)
        if history is not None and not isinstance(history, History):
            raise TypeError(f"train must return a History or None; got {type(history).__name__}")
        fresh.append(model)
        state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
        return {"state_dict": state, "history": history}

    stored = cached(name, keyed, compute, package=packages[0], verbose=verbose)
    if fresh:  # just trained: hand back that very model
        return Trained(fresh[0], stored["history"])
    model = _build(build)
    model.load_state_dict(stored["state_dict"], strict=True)
    return Trained(model, stored["history"])


def _build(build: Callable[[], nn.Module]) -> nn.Module:
    model = build()
    if not isinstance(model, nn.Module):
        raise TypeError(f"build must return a torch.nn.Module; got {type(model).__name__}")
    return model
