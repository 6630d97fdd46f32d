"""SpecBlock drafting whose trees use only the first ``slots`` of the ``K`` slots of every block.

``K`` is fixed by the trained drafter (``K = 4``); the explore notebook's "K" slider is read this way: a
drafter trained with ``K = 4`` whose trees use ``K' ≤ 4`` slots. The forward still computes all ``K``
slots, so the drafting cost does not shrink. A method variant of :mod:`.dynamic_tree`, not a baseline.
"""

from __future__ import annotations

import dataclasses

from neurips26.specblock.drafter import BlockOutput, SpecBlockDrafter
from neurips26.specblock.dynamic_tree import SpecBlockProposer
from neurips26.validation import check_int


class SlotLimitedProposer(SpecBlockProposer):
    """:class:`~.dynamic_tree.SpecBlockProposer` whose trees use only the first ``slots`` slots of a block.

    Each block forward still computes all ``K`` slots (the drafter was trained with ``K``); the rank walk,
    the spine and the pending leaves see slots ``0 … slots-1`` only, so new blocks start from those
    slots. ``slots = K`` is SpecBlock unchanged. Other arguments: as :class:`SpecBlockProposer`.
    """

    def __init__(self, drafter: SpecBlockDrafter, *, slots: int, **kwargs):
        super().__init__(drafter, **kwargs)
        self.slots = check_int("slots", slots, minimum=1, maximum=drafter.config.block_size)

    def _grow(self, tree, out: BlockOutput, b: int, r: int, parent: int, level: int):  # noqa: ANN001, ANN202
        k = self.slots
        if k < out.logits.shape[2]:
            rank = None if out.rank_logits is None else out.rank_logits[:, :, :k]
            out = dataclasses.replace(out, logits=out.logits[:, :, :k], rank_logits=rank)
        return super()._grow(tree, out, b, r, parent, level)
