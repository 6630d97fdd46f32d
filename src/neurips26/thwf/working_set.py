"""Bookkeeping shared by the batched iterative solvers: which instances still iterate.

A batched solver runs ``T`` independent instances with stacked arrays. Once an instance has
converged or diverged, its final ``(h, x)`` is written to the output and its rows are dropped
from every per-instance array, so finished instances cost nothing in later iterations.
"""

from __future__ import annotations

import numpy as np


class WorkingSet:
    """The unfinished instances of a batch: their global ``rows`` and their per-instance ``state``.

    ``state`` maps names to arrays whose first axis runs over the unfinished instances and must
    hold the current iterates under ``"h"`` and ``"x"``; ``h_out``/``x_out`` (first axis over the
    whole batch) receive each instance's final iterate.
    """

    def __init__(self, state: dict[str, np.ndarray], h_out: np.ndarray, x_out: np.ndarray) -> None:
        if "h" not in state or "x" not in state:
            raise ValueError("state must hold the current iterates under 'h' and 'x'")
        self.state = state
        self.h_out, self.x_out = h_out, x_out
        self.rows = np.arange(h_out.shape[0])

    def retire(self, finished: np.ndarray) -> bool:
        """Store the final iterates of the ``finished`` rows, drop them; True once none are left."""
        if finished.any():
            self.h_out[self.rows[finished]] = self.state["h"][finished]
            self.x_out[self.rows[finished]] = self.state["x"][finished]
            keep = ~finished
            self.rows = self.rows[keep]
            self.state = {name: value[keep] for name, value in self.state.items()}
        return self.rows.size == 0

    def outputs(self) -> tuple[np.ndarray, np.ndarray]:
        """``(h_out, x_out)`` with the instances still running stored at their current iterate."""
        self.h_out[self.rows], self.x_out[self.rows] = self.state["h"], self.state["x"]
        return self.h_out, self.x_out
