import numpy as np
import pytest
import torch

from neurips26.sparse_sos.tasks.oscillator import (
    certified_rate,
    oscillator_chain,
    oscillator_instance,
    oscillator_lmi,
)
from tests.unit.sparse_sos.test_task_checks import (
    assert_data_reproduces,
    directional_errors,
    relative_error,
    task_value,
)


@pytest.mark.parametrize("formulation", ["sparse", "dense"])
def test_data_round_trip_and_rate_below_the_spectral_bound(formulation):
    inst = oscillator_instance(4, 0, formulation)
    assert_data_reproduces(inst)
    chain = oscillator_chain(4, 0)
    mu, _ = certified_rate(chain, dense=formulation == "dense")
    assert 0 < mu <= chain.spectral_bound() + 1e-8
    assert inst.multi_block


def test_banded_certificate_is_a_restriction_of_the_full_one():
    chain = oscillator_chain(5, 1)
    sparse, _ = certified_rate(chain)
    dense, _ = certified_rate(chain, dense=True)
    assert sparse <= dense + 1e-8
    assert dense == pytest.approx(chain.spectral_bound(), abs=1e-6)


@pytest.mark.parametrize("dense", [False, True])
def test_rate_gradient_matches_finite_differences_of_the_bisection(dense):
    # measured: 3.5e-7 (sparse) and 5.5e-8 (dense) at N = 3; 1.5e-5 and 1.5e-6 at N = 5
    chain = oscillator_chain(3, 0)
    _, grad = certified_rate(chain, dense=dense)
    v = torch.as_tensor(np.random.default_rng(0).standard_normal(3))
    v = v / v.norm()
    h = 1e-3
    plus, _ = certified_rate(chain, chain.theta0 + h * v, dense=dense)
    minus, _ = certified_rate(chain, chain.theta0 - h * v, dense=dense)
    assert relative_error((float(grad @ v.numpy()), (plus - minus) / (2 * h))) <= 1e-4


def test_inner_value_gradient_matches_finite_differences_on_the_banded_program():
    # measured 8.7e-7 (N = 3), 9.7e-5 (N = 5); the dense program at μ* sits on the spectral abscissa,
    # where t* is not differentiable in θ (one-sided slopes differ): not tested there
    inst = oscillator_instance(3, 0, "sparse")
    assert relative_error(directional_errors(inst, task_value)) <= 1e-4


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="N"):
        oscillator_chain(1)
    with pytest.raises(ValueError, match="kappa"):
        oscillator_lmi(3, np.ones(4), kappa=0.5)
    with pytest.raises(ValueError, match="theta"):
        oscillator_instance(3).data(torch.ones(2))
    with pytest.raises(ValueError, match="formulation"):
        oscillator_instance(3, 0, "full")
