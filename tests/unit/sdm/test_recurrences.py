"""The three SDM recurrences agree (values, tables, gradients); GDN's and Mamba-2's loop and closed forms
agree; the noiseless cases are exact."""

import pytest
import torch

from neurips26.sdm.gdn import gdn_parallel, gdn_recurrent
from neurips26.sdm.mamba2 import mamba2_parallel, mamba2_recurrent
from neurips26.sdm.product_keys import product_key_topk
from neurips26.sdm.sdm import sdm_dense, sdm_parallel, sdm_reference, sdm_step, sdm_step_

F64 = torch.float64
RUNS = (sdm_reference, sdm_dense, sdm_parallel)


def _inputs(seed, *, S=3, T=10, n=4, d=5, W=3, R=4, decay=1.0, learned=True, requires_grad=False):
    gen = torch.Generator().manual_seed(seed)
    N = n * n

    def address(k):
        z = torch.randn(S, T, 2, n, generator=gen, dtype=F64)
        idx, s = product_key_topk(z[:, :, 0], z[:, :, 1], k)
        return idx, s.softmax(-1)

    wi, ka = address(W)
    ri, rh = address(R)
    v = torch.randn(S, T, d, generator=gen, dtype=F64)
    g = -decay * torch.rand(S, T, generator=gen, dtype=F64)
    beta = torch.rand(S, T, generator=gen, dtype=F64)
    M0 = torch.randn(S, N, d, generator=gen, dtype=F64) if learned else None
    tensors = {"v": v, "kappa": ka, "rho": rh, "g": g, "beta": beta, "M0": M0}
    if requires_grad:
        for t in tensors.values():
            if t is not None:
                t.requires_grad_(True)
    return {"write_idx": wi, "read_idx": ri, **tensors, "slots": N}


def _call(run, a):
    return run(
        a["v"],
        a["write_idx"],
        a["kappa"],
        a["read_idx"],
        a["rho"],
        a["g"],
        a["beta"],
        a["M0"],
        slots=a["slots"],
    )


@pytest.mark.parametrize(
    "case",
    [
        {},
        {"learned": False},
        {"W": 1, "R": 1},
        {"W": 16, "R": 16},  # W = N
        {"decay": 30.0},  # strong decay
        {"n": 1, "W": 1, "R": 1},
        {"T": 1},
    ],
)
def test_three_recurrences_agree(case):
    a = _inputs(7, **case)
    (o1, M1), (o2, M2), (o3, M3) = (_call(run, a) for run in RUNS)
    for o, M in ((o2, M2), (o3, M3)):
        assert (o - o1).abs().max() < 1e-9
        assert (M - M1).abs().max() < 1e-9


def test_gradients_agree():
    grads = []
    for run in RUNS:
        a = _inputs(3, requires_grad=True)
        o, M = _call(run, a)
        (o.sin().sum() + M.cos().sum()).backward()
        grads.append([a[k].grad for k in ("v", "kappa", "rho", "g", "beta", "M0")])
    for other in grads[1:]:
        for g_ref, g in zip(grads[0], other, strict=True):
            assert (g - g_ref).abs().max() < 1e-7


def test_gradcheck_through_the_solve_and_the_loop():
    a = _inputs(5, S=1, T=4, n=2, d=2, W=2, R=2, requires_grad=True)
    for run in (sdm_reference, sdm_parallel):

        def f(v, ka, rh, g, b, M0, run=run):
            return run(v, a["write_idx"], ka, a["read_idx"], rh, g, b, M0, slots=4)[0]

        assert torch.autograd.gradcheck(f, (a["v"], a["kappa"], a["rho"], a["g"], a["beta"], a["M0"]))


def test_untouched_slots_are_bit_identical_and_in_place_equals_out_of_place():
    a = _inputs(11, S=2, T=1)
    M = a["M0"].clone()
    args = [a[k][:, 0] for k in ("v", "write_idx", "kappa", "read_idx", "rho", "g", "beta")]
    M_new, o = sdm_step(M, *args)
    written = torch.zeros(2, 16, dtype=torch.bool).scatter(1, a["write_idx"][:, 0], True)
    assert torch.equal(M_new[~written], M[~written])
    M_inplace = M.clone()
    o2 = sdm_step_(M_inplace, *args)
    assert torch.equal(M_inplace, M_new) and torch.equal(o2, o)


def test_beta_zero_alpha_one_keeps_the_table():
    a = _inputs(2)
    a["beta"] = torch.zeros_like(a["beta"])
    a["g"] = torch.zeros_like(a["g"])
    for run in RUNS:
        _, M = _call(run, a)
        assert torch.equal(M, a["M0"]) if run is sdm_reference else (M - a["M0"]).abs().max() < 1e-12


def test_one_write_with_alpha_beta_one_stores_v_and_reads_it_back():
    """α = β = 1, W = R = 1, the read slot the written one: the reading is v exactly."""
    a = _inputs(4, W=1, R=1, T=6)
    a["g"], a["beta"] = torch.zeros_like(a["g"]), torch.ones_like(a["beta"])
    a["read_idx"] = a["write_idx"].clone()
    for run in RUNS:
        o, _ = _call(run, a)
        assert (o - a["v"]).abs().max() < 1e-12


def test_sdm_with_every_slot_written_is_gdn_fed_kappa_and_rho():
    """N = d_k = 4, W = R = 4: the decay touches every slot, the key is the dense κ, the query ρ."""
    a = _inputs(8, n=2, W=4, R=4)
    o, M = _call(sdm_reference, a)
    k = torch.zeros(3, 10, 4, dtype=F64).scatter(-1, a["write_idx"], a["kappa"])
    q = torch.zeros(3, 10, 4, dtype=F64).scatter(-1, a["read_idx"], a["rho"])
    o_gdn, S = gdn_recurrent(q, k, a["v"], a["g"], a["beta"], a["M0"].transpose(-1, -2))
    assert (o - o_gdn).abs().max() < 1e-12
    assert (M - S.transpose(-1, -2)).abs().max() < 1e-12


def _gdn_inputs(seed, S=2, T=9, dk=4, dv=3):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(S, T, dk, generator=gen, dtype=F64)
    k = torch.nn.functional.normalize(torch.randn(S, T, dk, generator=gen, dtype=F64), dim=-1)
    v = torch.randn(S, T, dv, generator=gen, dtype=F64)
    g = -torch.rand(S, T, generator=gen, dtype=F64)
    b = torch.rand(S, T, generator=gen, dtype=F64)
    S0 = torch.randn(S, dv, dk, generator=gen, dtype=F64)
    return q, k, v, g, b, S0


@pytest.mark.parametrize("learned", [False, True])
def test_gdn_and_mamba2_closed_forms_equal_their_loops(learned):
    q, k, v, g, b, S0 = _gdn_inputs(1)
    S0 = S0 if learned else None
    for (o1, s1), (o2, s2) in (
        (gdn_recurrent(q, k, v, g, b, S0), gdn_parallel(q, k, v, g, b, S0)),
        (mamba2_recurrent(q, k, v, g, S0), mamba2_parallel(q, k, v, g, S0)),
    ):
        assert (o1 - o2).abs().max() < 1e-9 and (s1 - s2).abs().max() < 1e-9


def test_gdn_gradcheck():
    q, k, v, g, b, S0 = (t.requires_grad_(True) for t in _gdn_inputs(2, S=1, T=4, dk=2, dv=2))
    assert torch.autograd.gradcheck(lambda *x: gdn_parallel(*x)[0], (q, k, v, g, b, S0))
    assert torch.autograd.gradcheck(lambda *x: gdn_recurrent(*x)[0], (q, k, v, g, b, S0))


def test_gdn_with_orthonormal_keys_stores_every_pair():
    """α = β = 1 and orthonormal keys: S_T k_i = v_i for every written pair (the delta rule is exact)."""
    gen = torch.Generator().manual_seed(0)
    keys = torch.linalg.qr(torch.randn(6, 6, generator=gen, dtype=F64))[0].T  # rows orthonormal
    v = torch.randn(1, 6, 4, generator=gen, dtype=F64)
    k = keys[None]
    ones, zeros = torch.ones(1, 6, dtype=F64), torch.zeros(1, 6, dtype=F64)
    _, S = gdn_recurrent(k, k, v, zeros, ones)
    assert ((S[0] @ keys.T).T - v[0]).abs().max() < 1e-12


def test_bad_inputs():
    a = _inputs(0)
    with pytest.raises(TypeError, match="v"):
        sdm_reference([1.0], a["write_idx"], a["kappa"], a["read_idx"], a["rho"], a["g"], a["beta"], slots=16)
    with pytest.raises(ValueError, match="slots"):
        sdm_reference(a["v"], a["write_idx"], a["kappa"], a["read_idx"], a["rho"], a["g"], a["beta"])
    with pytest.raises(ValueError, match="write_idx"):
        sdm_reference(
            a["v"], a["write_idx"] + 16, a["kappa"], a["read_idx"], a["rho"], a["g"], a["beta"], slots=16
        )
    with pytest.raises(ValueError, match="kappa"):
        sdm_parallel(
            a["v"], a["write_idx"], a["kappa"][..., :1], a["read_idx"], a["rho"], a["g"], a["beta"], slots=16
        )
    with pytest.raises(ValueError, match="M0"):
        sdm_dense(
            a["v"], a["write_idx"], a["kappa"], a["read_idx"], a["rho"], a["g"], a["beta"], a["M0"][..., :2]
        )
    with pytest.raises(ValueError, match="write_idx"):
        sdm_dense(
            a["v"], a["write_idx"].double(), a["kappa"], a["read_idx"], a["rho"], a["g"], a["beta"], slots=16
        )
    q, k, v, g, b, S0 = _gdn_inputs(0)
    with pytest.raises(ValueError, match="beta"):
        gdn_recurrent(q, k, v, g, b[:, :3], S0)
    with pytest.raises(ValueError, match="S0"):
        gdn_parallel(q, k, v, g, b, S0[..., :2])
