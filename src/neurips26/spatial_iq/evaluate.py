"""How a trained model is asked: the paper's protocol and a stricter one.

- **paper** (as the released checkpoint evaluator): the backbone and SFT-plain answer every question on
  its own; SFT-CoT and the RL model answer only the total question, and their sub-answers are read from
  the labelled entries of their own greedy chain (:func:`~neurips26.spatial_iq.tokens.read_chain`). They
  are never asked a sub-task on its own, and no trained model is scored on rotation (the released
  evaluator drops those questions).
- **separate** (ours): every model answers every question on its own, rotation included.

Both return an answer sheet (task → one value per view; -1 or "" where no answer could be read), the
layout of :mod:`~neurips26.spatial_iq.metrics`.
"""

from __future__ import annotations

import numpy as np
import torch

from neurips26.spatial_iq.dataset import ViewSet
from neurips26.spatial_iq.tasks import TASKS
from neurips26.spatial_iq.tokens import CHAIN, question, read_answer, read_chain
from neurips26.spatial_iq.training import images_for
from neurips26.spatial_iq.vlm import TinyVLM, generate
from neurips26.validation import check_choice

PROTOCOLS = ("paper", "separate")
KINDS = ("plain", "cot")
#: Questions the paper protocol does not put to trained models.
NOT_ASKED = ("T2a", "T2b")


@torch.no_grad()
def replies(model: TinyVLM, data: ViewSet, task: str, *, batch: int = 256) -> list[list[int]]:
    """The model's greedy reply tokens to ``task`` for every view of ``data``."""
    out: list[list[int]] = []
    for start in range(0, len(data), batch):
        rows = np.arange(start, min(start + batch, len(data)))
        prompt = torch.tensor([question(task)] * len(rows))
        out += generate(model, images_for(data, rows, task), prompt).tolist()
    return out


def ask(model: TinyVLM, data: ViewSet, task: str) -> np.ndarray:
    """The plain answer to ``task`` for every view (-1 / "" where none could be read)."""
    values = [read_answer(r, task) for r in replies(model, data, task)]
    return np.array(values, dtype=object if task == "S1" else np.int64)


def chain_sheet(model: TinyVLM, data: ViewSet) -> dict[str, np.ndarray]:
    """Sub-answers read from the model's chain of thought for the total question, and the total."""
    chains = [read_chain(r) for r in replies(model, data, "T1")]
    sheet = {t: np.array([c[t] for c in chains], dtype=np.int64) for t in (*CHAIN[1:], "T1")}
    sheet["S1"] = np.array([c["S1"] for c in chains], dtype=object)
    return sheet


def answer_sheet(model: TinyVLM, data: ViewSet, kind: str, protocol: str = "paper") -> dict[str, np.ndarray]:
    """A model's answer sheet under ``protocol`` (module doc); ``kind`` says how it was trained."""
    if not isinstance(model, TinyVLM):
        raise TypeError(f"model must be a TinyVLM; got {type(model).__name__}")
    kind = check_choice("kind", kind, KINDS)
    protocol = check_choice("protocol", protocol, PROTOCOLS)
    if protocol == "paper" and kind == "cot":
        return chain_sheet(model, data)
    tasks = [t for t in TASKS if protocol == "separate" or t not in NOT_ASKED]
    return {t: ask(model, data, t) for t in tasks}


__all__ = ["KINDS", "NOT_ASKED", "PROTOCOLS", "answer_sheet", "ask", "chain_sheet", "replies"]
