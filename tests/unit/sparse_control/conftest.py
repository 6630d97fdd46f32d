"""A small random model in float64 and its candidate nodes on IOI prompts, shared by the tests."""

import pytest
import torch

from neurips26.nn import Decoder
from neurips26.sparse_control.model import ModelSpec, as_float64, freeze
from neurips26.sparse_control.nodes import build_nodes
from neurips26.sparse_control.tasks import contrast, make_prompts


@pytest.fixture(scope="session")
def model64():
    return as_float64(freeze(Decoder(ModelSpec(depth=2).config(), seed=1)))


@pytest.fixture(scope="session")
def ioi():
    return make_prompts("ioi", 12, split="selection", seed=0)


@pytest.fixture(scope="session")
def nodes(model64, ioi):
    c = contrast(ioi)
    return build_nodes(model64, torch.from_numpy(ioi.ids), torch.from_numpy(c.ids), ioi.answer, ioi.target)
