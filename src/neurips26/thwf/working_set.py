"""Bookkeeping shared by the batched iterative baselines: which instances still iterate.

A batched solver runs ``T`` independent instances with stacked arrays. After each iteration it
records the iteration count and (when the truth is known) the lifted error of every running
instance; an instance that converged or diverged is written to the output and its rows are
dropped from every per-instance array, so finished instances cost nothing afterwards.
"""

from __future__ import annotations

import numpy as np

from neurips26.thwf.metrics import lifted_error_unchecked


class WorkingSet:
    """The running instances of a batch: their global ``rows`` and per-instance ``state``.

    ``state`` maps names to arrays whose first axis runs over the running instances; it must hold
    the current iterates under ``"h"`` and ``"x"``. With the truth ``h0``/``x0`` given, ``errors``
    (``T × (max_iter + 1)``, NaN after an instance stopped) records the lifted error per iteration.
    """

    def __init__(
        self,
        state: dict[str, np.ndarray],
        max_iter: int,
        h0: np.ndarray | None = None,
        x0: np.ndarray | None = None,
    ) -> None:
        if "h" not in state or "x" not in state:
            raise ValueError("state must hold the current iterates under 'h' and 'x'")
        h, x = state["h"], state["x"]
        total = h.shape[0]
        self.state = dict(state)
        self.h_out, self.x_out = h.copy(), x.copy()
        self.rows = np.arange(total)
        self.iterations = np.zeros(total, dtype=np.int64)
        self.converged = np.zeros(total, dtype=bool)
        self.diverged = np.zeros(total, dtype=bool)
        self.errors = None
        if h0 is not None:
            self.state["h0"], self.state["x0"] = h0, x0
            self.errors = np.full((total, max_iter + 1), np.nan)
            self.errors[:, 0] = lifted_error_unchecked(h, x, h0, x0)

    def advance(self, t: int, h_new: np.ndarray, x_new: np.ndarray, done: np.ndarray) -> bool:
        """Record iterate ``t + 1`` of the running instances; retire the diverged and ``done`` ones.

        An iterate with a non-finite entry counts as diverged. Returns True once none are left.
        """
        rows = self.rows
        self.state["h"], self.state["x"] = h_new, x_new
        self.iterations[rows] = t + 1
        if self.errors is not None:
            truth = self.state["h0"], self.state["x0"]
            self.errors[rows, t + 1] = lifted_error_unchecked(h_new, x_new, *truth)
        bad = ~(np.all(np.isfinite(h_new), axis=-1) & np.all(np.isfinite(x_new), axis=-1))
        done = ~bad & done
        self.diverged[rows[bad]] = True
        self.converged[rows[done]] = True
        return self.retire(bad | done)

    def retire(self, finished: np.ndarray) -> bool:
        """Store the final iterates of the ``finished`` rows, drop them; True once none are left."""
        if finished.any():
            self.h_out[self.rows[finished]] = self.state["h"][finished]
            self.x_out[self.rows[finished]] = self.state["x"][finished]
            keep = ~finished
            self.rows = self.rows[keep]
            self.state = {name: value[keep] for name, value in self.state.items()}
        return self.rows.size == 0

    def outcome(self) -> tuple[np.ndarray, ...]:
        """``(h, x, errors, iterations, converged, diverged)`` for the whole batch."""
        self.h_out[self.rows], self.x_out[self.rows] = self.state["h"], self.state["x"]
        return self.h_out, self.x_out, self.errors, self.iterations, self.converged, self.diverged
