"""The amplitudes of a chosen node set fitted on the model itself: Gauss–Newton on the shared amplitudes,
inside the energy ball.

A selector chooses nodes on the linearisation at ``a = 0``; the linear amplitudes are right only while the
model stays linear, and the doses that flip a behaviour are often outside that range. Every selector's nodes
therefore get the same final fit (so that selectors differ only in their choice): from the selector's
amplitudes, repeat ``a ← argmin_{‖a‖ ≤ E} ‖J(a_t)(a − a_t) − (y* − y(a_t))‖²``, with ``J`` the Jacobian of
the target readouts with respect to the ``k`` amplitudes re-measured at every step, halving a step that does
not lower the residual (a damped Gauss–Newton on ``‖y(a) − y*‖²``). It is Driver-OMP's "re-linearise"
option applied to the amplitudes once the nodes are fixed.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from neurips26.nn import Decoder
from neurips26.sparse_control.controllability import ball_least_squares
from neurips26.sparse_control.driver_omp import Control
from neurips26.sparse_control.intervene import intervened
from neurips26.sparse_control.nodes import NodeSet
from neurips26.sparse_control.readouts import target_readout
from neurips26.sparse_control.tasks import PromptSet
from neurips26.validation import check_float, check_int

STEPS = 6
HALVINGS = 4


def readout_and_jacobian(
    model: Decoder, nodes: NodeSet, control: Control, prompts: PromptSet, amplitudes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The target readouts ``(n,)`` at the shared ``amplitudes`` of ``control``'s nodes and their Jacobian
    ``(n, k)``: the amplitudes enter as one row per prompt, so that one backward gives every row (the prompts
    do not interact)."""
    n, k = len(prompts), len(control)
    dtype = next(model.parameters()).dtype
    rows = np.broadcast_to(np.asarray(amplitudes, dtype=float), (n, k)).copy()
    amps = torch.tensor(rows, dtype=dtype, requires_grad=True)
    with intervened(model, nodes.subset(control.nodes), np.arange(k), amps):
        y = target_readout(model(torch.from_numpy(prompts.ids)).logits[:, -1], prompts)
    (g,) = torch.autograd.grad(y.sum(), amps)
    return y.detach().cpu().numpy(), g.detach().cpu().numpy()


def gauss_newton_refit(
    model: Decoder,
    nodes: NodeSet,
    control: Control,
    prompts: PromptSet,
    goal: float,
    *,
    energy: float,
    steps: int = STEPS,
) -> Control:
    """``control``'s nodes with amplitudes refitted so that the target readouts come near ``goal`` on
    ``prompts`` (module doc); ``residual`` becomes the measured ``‖y(a) − y*‖ / ‖y(0) − y*‖``."""
    energy = check_float("energy", energy, minimum=0.0, strict_min=True)
    steps = check_int("steps", steps, minimum=0)
    if not len(control):
        return control
    target = np.full(len(prompts), float(goal))
    y0, _ = readout_and_jacobian(model, nodes, control, prompts, np.zeros(len(control)))
    a = ball_least_squares(np.eye(len(control)), np.asarray(control.amplitudes, dtype=float), energy)
    y, J = readout_and_jacobian(model, nodes, control, prompts, a)
    cost = float(np.linalg.norm(target - y))
    for _ in range(steps):
        proposal = ball_least_squares(J, target - y + J @ a, energy)
        for _ in range(HALVINGS + 1):
            y_new, J_new = readout_and_jacobian(model, nodes, control, prompts, proposal)
            new_cost = float(np.linalg.norm(target - y_new))
            if new_cost < cost:
                break
            proposal = 0.5 * (a + proposal)
        else:
            break
        a, y, J, cost = proposal, y_new, J_new, new_cost
    residual = cost / max(float(np.linalg.norm(target - y0)), 1e-300)
    return replace(control, amplitudes=a, residual=residual)
