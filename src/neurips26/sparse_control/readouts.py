"""What a control is judged by: the target readout of a task and the first-order preservation readouts.

- **Target** ``y_T(x) = z_t − log Σ_{o ≠ t} e^{z_o}``: the final-position logit of the prompt's target
  token ``t`` against the other options (IOI: logit(S) − logit(IO); MCQA: ``D`` against the other three
  letters; sentiment: the opposite label against the right one; refusal: ``OK`` against ``REFUSE``). The
  control succeeds on a prompt when ``y_T > 0``: the target is the model's choice.
- **Preservation, first order.** KL to the unperturbed distribution has zero gradient at ``a = 0``, so
  selection uses readouts that move to first order: the centred log-probabilities of the unperturbed
  model's top-8 tokens, at the last position of neutral windows and at the final position of the task's
  own prompts (options excluded), and the other tasks' own margins ``z_answer − log Σ e^{z_others}``.
- **KL** ``KL(p_0 ‖ p_a)`` at the last position, for evaluation only.
"""

from __future__ import annotations

import numpy as np
import torch

from neurips26.sparse_control.tasks import PromptSet

TOP = 8


def option_margin(logits: torch.Tensor, options: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
    """``z_c − log Σ_{o ≠ c} e^{z_o}`` over each row's ``options`` ``(N, K)``, ``c`` the ``chosen`` token
    ``(N,)``."""
    z = logits.gather(1, options)
    is_chosen = options == chosen[:, None]
    if not bool(is_chosen.any(1).all()):
        raise ValueError("chosen must be one of each prompt's options")
    others = z.masked_fill(is_chosen, float("-inf"))
    return (z * is_chosen).sum(1) - torch.logsumexp(others, dim=1)


def target_readout(logits: torch.Tensor, prompts: PromptSet) -> torch.Tensor:
    """``y_T`` of every prompt ``(N,)`` from its final-position logits ``(N, V)``."""
    device = logits.device
    return option_margin(
        logits, torch.from_numpy(prompts.options).to(device), torch.from_numpy(prompts.target).to(device)
    )


def answer_readout(logits: torch.Tensor, prompts: PromptSet) -> torch.Tensor:
    """The task's own margin ``z_answer − log Σ_{o ≠ answer} e^{z_o}`` ``(N,)``: positive when right."""
    device = logits.device
    return option_margin(
        logits, torch.from_numpy(prompts.options).to(device), torch.from_numpy(prompts.answer).to(device)
    )


def top_tokens(logits: torch.Tensor, exclude: np.ndarray | None = None, k: int = TOP) -> torch.Tensor:
    """The ``k`` most likely tokens of each row ``(N, k)`` (``exclude`` ``(N, K)`` ids left out)."""
    z = logits.detach().clone()
    if exclude is not None:
        z.scatter_(1, torch.from_numpy(exclude).to(z.device), float("-inf"))
    return z.topk(k, dim=1).indices


def centred_logprobs(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Log-probabilities of ``tokens`` ``(N, k)``, minus their row mean (a change of the whole row's level
    is not a change of the distribution among them)."""
    lp = torch.log_softmax(logits, dim=1).gather(1, tokens)
    return lp - lp.mean(1, keepdim=True)


def kl_last(logits0: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    """``KL(p_0 ‖ p)`` of every row ``(N,)``, in nats."""
    lp0, lp = torch.log_softmax(logits0, dim=1), torch.log_softmax(logits, dim=1)
    return (lp0.exp() * (lp0 - lp)).sum(1)
