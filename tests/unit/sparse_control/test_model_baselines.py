"""Dense steering and patching: the dense vector acts at every position of one residual layer; patching a
prompt from itself changes nothing; patching from the contrast moves the readout as measured."""

import numpy as np
import torch

from neurips26.sparse_control.intervene import intervened
from neurips26.sparse_control.model_baselines import (
    dense_nodes,
    dense_steering,
    patch_effects,
    patching_top_k,
)
from neurips26.sparse_control.tasks import contrast


def test_dense_vector_acts_at_every_position(model64, nodes, ioi):
    dense = dense_nodes(nodes)
    assert 1 <= len(dense) <= sum(s.component == "resid" for s in nodes.sites)
    assert all(dense.sites[s].position is None for s in dense.site_of)
    ids = torch.from_numpy(ioi.ids)
    plain = model64(ids).logits
    with intervened(model64, dense, [0], torch.tensor([1.0], dtype=torch.float64)):
        driven = model64(ids).logits
    assert (driven[:, 0] != plain[:, 0]).any(1).all()  # the first position moves too
    _, control = dense_steering(model64, nodes, ioi, energy=3.0)
    assert len(control) == 1 and abs(control.amplitudes[0]) <= 3.0


def test_patching_from_itself_is_zero_and_top_k_takes_the_largest(model64, nodes, ioi):
    rows = np.arange(0, len(nodes), 97)
    sub = nodes.subset(rows)
    same = patch_effects(model64, sub, ioi, ioi, patch_prompts=4)
    np.testing.assert_allclose(same, 0.0, atol=1e-12)
    effects = patch_effects(model64, sub, ioi, contrast(ioi), patch_prompts=4)
    assert np.abs(effects).max() > 0
    G = np.random.default_rng(0).normal(size=(5, len(sub)))
    c = patching_top_k(G, np.ones(5), effects, k=2)
    assert set(c.nodes) == set(np.argsort(-effects)[:2])
