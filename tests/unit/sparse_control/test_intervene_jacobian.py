"""Interventions and the Jacobian: amplitude 0 changes nothing, hooks never outlive the block, a node at
a position leaves earlier positions alone, per-prompt and shared amplitudes agree, and autograd's Jacobian
equals central differences of the intervened model."""

import numpy as np
import pytest
import torch

from neurips26.nn import hook_points, hooked
from neurips26.sparse_control.intervene import intervened, logits_with
from neurips26.sparse_control.jacobian import linearise
from neurips26.sparse_control.nodes import Site, build_nodes
from neurips26.sparse_control.readouts import target_readout
from neurips26.sparse_control.tasks import contrast, make_prompts, neutral_windows


def _no_hooks(model):
    return all(not p._forward_hooks for p in hook_points(model).values())


def test_zero_amplitude_is_bit_identical_and_hooks_are_removed(model64, nodes, ioi):
    ids = torch.from_numpy(ioi.ids)
    plain = model64(ids).logits
    chosen = np.arange(0, len(nodes), 37)
    with intervened(model64, nodes, chosen, torch.zeros(len(chosen), dtype=torch.float64)):
        assert not _no_hooks(model64)
        driven = model64(ids).logits
    assert torch.equal(plain, driven) and _no_hooks(model64)
    with pytest.raises(RuntimeError, match="boom"):
        with intervened(model64, nodes, chosen, torch.ones(len(chosen), dtype=torch.float64)):
            raise RuntimeError("boom")
    assert _no_hooks(model64)


def test_a_node_changes_only_its_position_and_later_ones(model64, ioi):
    ids = torch.from_numpy(ioi.ids)
    c = contrast(ioi)
    named = build_nodes(model64, ids, torch.from_numpy(c.ids), ioi.answer, ioi.target, position=5)
    j = int(np.flatnonzero(np.array([named.sites[s].component for s in named.site_of]) == "resid")[3])
    plain = model64(ids).logits
    with intervened(model64, named, [j], torch.tensor([2.0], dtype=torch.float64)):
        driven = model64(ids).logits
    assert torch.equal(plain[:, :5], driven[:, :5])
    assert (plain[:, 5:] != driven[:, 5:]).any()


def test_shared_and_per_prompt_amplitudes_agree(model64, nodes, ioi):
    ids = torch.from_numpy(ioi.ids)
    chosen = [3, 500, len(nodes) - 1]
    a = torch.tensor([0.5, -1.0, 0.25], dtype=torch.float64)
    shared = logits_with(model64, ids, nodes, chosen, a)
    rows = logits_with(model64, ids, nodes, chosen, a.expand(len(ids), 3).clone())
    torch.testing.assert_close(shared, rows, rtol=0, atol=1e-12)


def test_jacobian_equals_central_differences(model64, nodes, ioi):
    lin = linearise(
        model64,
        nodes,
        ioi,
        neutral_windows(6, 12, seed=0),
        [make_prompts("sentiment", 6, split="selection", seed=1)],
    )
    ids = torch.from_numpy(ioi.ids)
    eps = 1e-5
    for j in np.random.default_rng(0).choice(len(nodes), size=6, replace=False):
        up = target_readout(
            logits_with(model64, ids, nodes, [j], torch.tensor([eps], dtype=torch.float64)), ioi
        )
        down = target_readout(
            logits_with(model64, ids, nodes, [j], torch.tensor([-eps], dtype=torch.float64)), ioi
        )
        fd = ((up - down) / (2 * eps)).numpy()
        np.testing.assert_allclose(lin.G_T[:, j], fd, rtol=1e-5, atol=1e-8)
    y0 = target_readout(model64(ids).logits[:, -1], ioi).detach().numpy()
    np.testing.assert_allclose(lin.y_T, y0, atol=1e-12)
    assert set(lin.parts) == {"neutral", "non-target", "task:sentiment"}
    assert np.abs(lin.G_P).max() > 0


def test_bad_input_is_named(model64, nodes):
    with pytest.raises(ValueError, match="chosen"):
        with intervened(model64, nodes, [len(nodes)], torch.zeros(1)):
            pass
    with pytest.raises(ValueError, match="amplitudes"):
        with intervened(model64, nodes, [0, 1], torch.zeros(3)):
            pass
    with pytest.raises(TypeError, match="amplitudes"):
        with intervened(model64, nodes, [0], [1.0]):
            pass
    with pytest.raises(ValueError, match="mode"):
        with intervened(model64, nodes, [0], torch.zeros(1), mode="multiply"):
            pass
    with pytest.raises(ValueError, match="component"):
        Site("blocks.0.resid_pre", "attention")


def test_clamp_sets_the_component_and_ablation_removes_it(model64, nodes, ioi):
    ids = torch.from_numpy(ioi.ids)
    for j in (
        2,
        int(np.flatnonzero(np.array([nodes.sites[s].component for s in nodes.site_of]) == "head")[0]),
    ):
        site = nodes.sites[nodes.site_of[j]]
        v = torch.from_numpy(nodes.vector(j))
        u = v / v.norm()
        seen = {}

        def keep(module, inputs, output, site=site, seen=seen):
            x = output[:, :, site.head] if site.component == "head" else output
            seen["x"] = x[:, site.position].detach()

        for level in (0.0, 0.7):
            with intervened(model64, nodes, [j], torch.tensor([level], dtype=torch.float64), mode="clamp"):
                with hooked(model64, {site.point: keep}):  # registered after: sees the clamped output
                    model64(ids)
            torch.testing.assert_close(
                seen["x"] @ u, torch.full((len(ids),), level * float(v.norm()), dtype=torch.float64)
            )
