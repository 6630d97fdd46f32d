"""Exact supports, greedy Jaccard families on hand-made masks, runtime matching and bad inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26.skae.supports import (
    TAU_ALIGN,
    TAU_ROUTE,
    alignment_codebook,
    fit_families,
    jaccard,
    jaccard_to,
    mask_key,
    mask_keys,
    routing_codebook,
    support_abs,
    support_mask,
    support_rel,
    support_topk,
)


def m(bits: str) -> np.ndarray:
    return np.array([c == "1" for c in bits])


def stack(*rows: tuple[str, int]) -> np.ndarray:
    return np.stack([m(bits) for bits, count in rows for _ in range(count)])


def test_support_rules() -> None:
    z = np.array([[1e-3, 1.0001e-3, -2e-3, 0.0]])
    assert support_abs(z).tolist() == [[False, True, True, False]]  # strict inequality
    assert support_abs(torch.tensor(z)).tolist() == [[False, True, True, False]]
    r = np.array([[1.0, 0.1, 0.11, -0.5], [0.0, 0.0, 0.0, 0.0]])
    assert support_rel(r).tolist() == [[True, False, True, True], [False] * 4]
    t = np.array([[0.5, -2.0, 0.5, 1.0, 0.5]])
    assert support_topk(t, 2).tolist() == [[False, True, False, True, False]]
    assert support_topk(t, 3).tolist() == [[True, True, False, True, False]]  # lowest index wins the tie
    assert support_mask(t, "topk", k=5).all()
    np.testing.assert_array_equal(support_mask(z), support_abs(z))
    np.testing.assert_array_equal(support_mask(r, "rel"), support_rel(r))


def test_jaccard_and_empty_masks() -> None:
    assert jaccard(m("0000"), m("0000")) == 1.0
    assert jaccard(m("1100"), m("1110")) == pytest.approx(2 / 3)
    assert jaccard(m("1100"), m("0011")) == 0.0
    np.testing.assert_allclose(jaccard_to(m("0000"), stack(("0000", 1), ("1000", 1))), [1.0, 0.0])


def test_families_on_hand_made_masks() -> None:
    # counts: A 3, B 2, C 2, D 1, E 1; visit order A, C (key 0x30 < 0xe0), B, E (key 0), D
    masks = stack(("1100", 3), ("1110", 2), ("0011", 2), ("0111", 1), ("0000", 1))
    fam = fit_families(masks, TAU_ALIGN)
    # B joins A (J = 2/3); C opens; E opens (J = 0 with both); D joins C (J(D,C) = 2/3 > J(D,A) = 1/4)
    assert fam.labels.tolist() == [0, 0, 0, 0, 0, 1, 1, 1, 2]
    assert fam.count == 3
    np.testing.assert_array_equal(fam.representatives, stack(("1100", 1), ("0011", 1), ("0000", 1)))
    strict = fit_families(masks, 0.7)  # 2/3 < 0.7: B and D open their own families
    assert strict.labels.tolist() == [0, 0, 0, 2, 2, 1, 1, 4, 3]
    assert fit_families(masks, 1.0).count == 5
    # a tiny τ_J merges every overlapping mask; the disjoint C and the empty E (J = 0) still stand apart
    assert fit_families(masks, 1e-9).count == 3


def test_a_mask_joins_the_best_family_not_the_first_good_one() -> None:
    masks = stack(("11110000", 3), ("00111100", 2), ("01111100", 1))
    # J(new, first) = 3/6 = 0.5 >= τ, but J(new, second) = 4/5 is larger
    assert fit_families(masks, 0.5).labels.tolist() == [0, 0, 0, 1, 1, 1]


def test_representatives_are_never_updated() -> None:
    masks = stack(("111000", 4), ("011000", 3), ("001100", 2))
    fam = fit_families(masks, 0.3)
    # 011000 joins 111000 (J = 2/3); 001100 has J = 1/4 with the fixed representative 111000 → new family
    assert fam.labels.tolist() == [0] * 7 + [1, 1]
    np.testing.assert_array_equal(fam.representatives[0], m("111000"))


def test_alignment_codebook_matches_seen_and_near_masks() -> None:
    fam = fit_families(stack(("1100", 3), ("0011", 2)), TAU_ALIGN)
    book = alignment_codebook(fam)
    queries = stack(("1100", 1), ("0011", 1), ("1110", 1), ("0111", 1), ("1001", 1), ("0000", 1))
    # seen keys; J(1110, 1100) = 2/3; J(0111, 0011) = 2/3; 1001 scores 1/3 with both; 0000 scores 0
    assert book.match(queries).tolist() == [0, 1, 0, 1, -1, -1]


def test_routing_codebook_uses_modal_source_masks_and_drops_sourceless_families() -> None:
    masks = stack(("1100", 2), ("1110", 3), ("0011", 1), ("1111", 1))
    source = np.array([True, True, True, True, True, False, False])
    fam = fit_families(masks, TAU_ROUTE)
    # 1110 (3) opens; 1100 (2) joins (J = 2/3); 0011 opens (J = 1/4); 1111 joins (J = 3/4)
    assert fam.labels.tolist() == [0, 0, 0, 0, 0, 1, 0]
    book = routing_codebook(fam, masks, source)
    assert book.representatives.shape == (1, 4)  # family 1 (0011) has no source state
    np.testing.assert_array_equal(book.representatives[0], m("1110"))  # the modal source mask
    assert book.tau_j == TAU_ROUTE
    assert book.match(stack(("1100", 1), ("0011", 1), ("1111", 1), ("0111", 1))).tolist() == [0, -1, 0, 0]


def test_routing_mode_ties_go_to_the_first_seen_mask() -> None:
    masks = stack(("0110", 2), ("1110", 2))
    fam = fit_families(masks, TAU_ROUTE)
    book = routing_codebook(fam, masks, np.ones(4, dtype=bool))
    np.testing.assert_array_equal(book.representatives[0], m("0110"))


@pytest.mark.parametrize("tau_j", [0.0, -0.1, 1.5, float("nan")])
def test_bad_tau_j(tau_j: float) -> None:
    with pytest.raises(ValueError, match="tau_j must be"):
        fit_families(stack(("10", 1)), tau_j)


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match=r"rule must be one of \('abs', 'rel', 'topk'\)"):
        support_mask(np.ones((1, 3)), "l1")
    with pytest.raises(ValueError, match="k must be <= 3"):
        support_topk(np.ones((1, 3)), 4)
    with pytest.raises(ValueError, match="k must be >= 1"):
        support_mask(np.ones((1, 3)), "topk", k=0)
    with pytest.raises(ValueError, match="k must be given"):
        support_mask(np.ones((1, 3)), "topk")
    with pytest.raises(ValueError, match="z must not contain NaN"):
        support_abs(np.array([[np.nan, 1.0]]))
    with pytest.raises(TypeError, match="masks must be a boolean array"):
        fit_families(np.ones((2, 3)), 0.5)
    with pytest.raises(ValueError, match=r"masks must have shape \(N, d_z\)"):
        fit_families(np.ones(3, dtype=bool), 0.5)
    fam = fit_families(stack(("10", 2)), 0.5)
    with pytest.raises(ValueError, match="source must be a boolean array"):
        routing_codebook(fam, stack(("10", 2)), np.ones(3, dtype=bool))
    with pytest.raises(ValueError, match="masks must have 2 columns"):
        alignment_codebook(fam).match(stack(("101", 1)))


def test_codebook_matching_equals_the_mask_by_mask_definition():
    rng = np.random.default_rng(0)
    fitted = rng.random((60, 13)) < 0.3
    codebook = alignment_codebook(fit_families(fitted, 0.6))
    queries = np.concatenate([fitted[:20], rng.random((200, 13)) < 0.3, np.zeros((3, 13), dtype=bool)])

    def one(mask: np.ndarray) -> int:
        family = codebook.key_to_family.get(mask_key(mask))
        if family is not None:
            return family
        scores = jaccard_to(mask, codebook.representatives)
        best = int(np.argmax(scores))
        return best if scores[best] >= codebook.tau_j else -1

    assert codebook.match(queries).tolist() == [one(q) for q in queries]
    assert codebook.match(np.zeros((0, 13), dtype=bool)).shape == (0,)


def test_mask_keys_equal_mask_key_row_by_row():
    rows = np.random.default_rng(1).random((50, 21)) < 0.4
    assert mask_keys(rows) == [mask_key(r) for r in rows]
