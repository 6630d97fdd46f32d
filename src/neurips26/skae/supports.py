"""Support objects (paper §method_supports, appendix "Support definitions"): exact supports, greedy Jaccard
support families, and the runtime matching of a new support to frozen families.

* Exact supports: ``S_abs = {i : |z_i| > 1e-3}`` (the paper's object),
  ``S_rel = {i : |z_i| > 0.1 max_j |z_j|}`` and the fixed-size top-k (the earlier draft's other two
  rules). Inequalities are strict.
* Families (:func:`fit_families`): count the distinct masks, visit them from most to least frequent (ties
  broken by the packed mask bytes, as the authors' ``_support_family_labels``), and let each mask join the
  family whose representative has the largest Jaccard score ``J = |m ∧ r| / |m ∨ r|`` (``J(0, 0) = 1``) if
  that score is ``≥ τ_J``, else open a new family with the mask as its representative. Representatives are
  never updated. ``τ_J = 0.5`` for alignment (fitted on the evaluation states: transductive) and ``0.4``
  for routing (fitted on training-distribution trajectories).
* Runtime matching (:class:`Codebook`, authors' ``_assign_family_ids_np``): a mask seen when the families
  were fitted maps to its family; an unseen one to the representative with the largest Jaccard score if it
  is ``≥ τ_J`` (the first family on ties), else to ``-1`` (the router then falls back to the global ``K``).
  For routing, each family's runtime representative is its modal *source* support (first seen on ties).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from neurips26.validation import check_choice, check_float, check_int

#: The paper's absolute activity threshold.
ABS_THRESHOLD = 1e-3
#: The earlier draft's relative threshold ratio.
REL_RATIO = 0.1
#: Guards the all-zero code of the relative rule (authors' ε).
REL_EPS = 1e-12
#: Jaccard threshold of the transductive alignment families.
TAU_ALIGN = 0.5
#: Jaccard threshold of the routing families.
TAU_ROUTE = 0.4
#: Support rules.
RULES = ("abs", "rel", "topk")


def _codes(z: object) -> np.ndarray:
    """``z`` as a float NumPy array of rank ≥ 1 (a torch tensor is detached and moved to the CPU)."""
    if hasattr(z, "detach"):
        z = z.detach().cpu().numpy()  # type: ignore[union-attr]
    a = np.asarray(z, dtype=float)
    if a.ndim < 1 or a.shape[-1] < 1:
        raise ValueError(f"z must have a last (latent) dimension of size >= 1; got shape {a.shape}")
    if np.isnan(a).any():
        raise ValueError("z must not contain NaN")
    return a


def support_abs(z: object, threshold: float = ABS_THRESHOLD) -> np.ndarray:
    """Boolean mask ``|z_i| > threshold`` (``S_abs`` at the paper's 1e-3)."""
    threshold = check_float("threshold", threshold, minimum=0.0)
    return np.abs(_codes(z)) > threshold


def support_rel(z: object, ratio: float = REL_RATIO) -> np.ndarray:
    """Boolean mask ``|z_i| / (max_j |z_j| + ε) > ratio`` (``S_rel``; empty for an all-zero code)."""
    ratio = check_float("ratio", ratio, minimum=0.0, maximum=1.0)
    a = np.abs(_codes(z))
    return a / (a.max(axis=-1, keepdims=True) + REL_EPS) > ratio


def support_topk(z: object, k: int) -> np.ndarray:
    """Boolean mask of the ``k`` largest ``|z_i|`` (the lowest index first on ties); ``k ∈ [1, d_z]``."""
    a = np.abs(_codes(z))
    k = check_int("k", k, minimum=1, maximum=a.shape[-1])
    order = np.argsort(-a, axis=-1, kind="stable")[..., :k]
    mask = np.zeros(a.shape, dtype=bool)
    np.put_along_axis(mask, order, True, axis=-1)
    return mask


def support_mask(z: object, rule: str = "abs", *, k: int | None = None) -> np.ndarray:
    """The exact support of ``z`` under ``rule`` (``"abs"``, ``"rel"`` or ``"topk"`` with ``k``)."""
    rule = check_choice("rule", rule, RULES)
    if rule == "abs":
        return support_abs(z)
    if rule == "rel":
        return support_rel(z)
    if k is None:
        raise ValueError("k must be given for rule='topk' (an int in [1, d_z])")
    return support_topk(z, k)


def check_tau_j(tau_j: object) -> float:
    """A Jaccard threshold in ``(0, 1]``."""
    return check_float("tau_j", tau_j, minimum=0.0, maximum=1.0, strict_min=True)


def _masks(masks: object) -> np.ndarray:
    m = np.asarray(masks)
    if m.dtype != bool:
        raise TypeError(f"masks must be a boolean array; got dtype {m.dtype}")
    if m.ndim != 2 or m.shape[1] < 1:
        raise ValueError(f"masks must have shape (N, d_z); got {m.shape}")
    return m


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """``|a ∧ b| / |a ∨ b|`` of two boolean masks, with ``J(0, 0) = 1``."""
    union = int(np.logical_or(a, b).sum())
    return 1.0 if union == 0 else int(np.logical_and(a, b).sum()) / union


def jaccard_to(mask: np.ndarray, representatives: np.ndarray) -> np.ndarray:
    """Jaccard score of one mask against each row of ``representatives`` (``J(0, 0) = 1``)."""
    inter = np.logical_and(representatives, mask).sum(axis=1)
    union = np.logical_or(representatives, mask).sum(axis=1)
    return np.where(union == 0, 1.0, inter / np.maximum(union, 1))


def mask_key(mask: np.ndarray) -> bytes:
    """The packed bytes of a mask (the authors' serialised key; also the tie-breaker of the visit order)."""
    return np.packbits(mask.astype(np.uint8)).tobytes()


def mask_keys(masks: np.ndarray) -> list[bytes]:
    """:func:`mask_key` of every row of ``masks`` ``(N, d_z)``, packed in one call."""
    return [row.tobytes() for row in np.packbits(masks.astype(np.uint8), axis=1)]


@dataclass(frozen=True)
class SupportFamilies:
    """Greedy Jaccard families of a collection of masks.

    ``labels[i]`` is the family of input mask ``i``; ``representatives[f]`` the mask that opened family
    ``f`` (families are numbered in the order they were opened); ``key_to_family`` maps every distinct
    mask's key to its family; ``tau_j`` the threshold used.
    """

    labels: np.ndarray
    representatives: np.ndarray
    key_to_family: dict[bytes, int] = field(repr=False)
    tau_j: float

    @property
    def count(self) -> int:
        """The number of families."""
        return int(self.representatives.shape[0])


def fit_families(masks: object, tau_j: float) -> SupportFamilies:
    """Greedy Jaccard merge of ``masks`` (``(N, d_z)`` bool) at threshold ``tau_j ∈ (0, 1]`` (see module)."""
    tau_j = check_tau_j(tau_j)
    m = _masks(masks)
    keys = mask_keys(m)
    counts = Counter(keys)
    first: dict[bytes, int] = {}
    for i, key in enumerate(keys):
        first.setdefault(key, i)
    reps: list[np.ndarray] = []
    key_to_family: dict[bytes, int] = {}
    for key, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        mask = m[first[key]]
        if reps:
            scores = jaccard_to(mask, np.stack(reps))
            best = int(np.argmax(scores))
            if scores[best] >= tau_j:
                key_to_family[key] = best
                continue
        key_to_family[key] = len(reps)
        reps.append(mask.copy())
    labels = np.array([key_to_family[key] for key in keys], dtype=np.int64)
    representatives = np.stack(reps) if reps else np.zeros((0, m.shape[1]), dtype=bool)
    return SupportFamilies(labels, representatives, key_to_family, tau_j)


@dataclass(frozen=True)
class Codebook:
    """Frozen families for runtime matching: exact keys seen at fit time, one representative per family."""

    key_to_family: dict[bytes, int] = field(repr=False)
    representatives: np.ndarray
    tau_j: float
    _unseen: dict[bytes, int] = field(default_factory=dict, init=False, repr=False, compare=False)

    def match(self, masks: object) -> np.ndarray:
        """Family of each mask (``-1`` when no representative reaches ``tau_j``); see the module docstring."""
        m = _masks(masks)
        if m.shape[1] != self.representatives.shape[1]:
            raise ValueError(f"masks must have {self.representatives.shape[1]} columns; got {m.shape[1]}")
        if m.shape[0] == 0:
            return np.full(0, -1, dtype=np.int64)
        # a row's packed bytes are its key (mask_key); each distinct unseen mask is scored once
        packed = np.ascontiguousarray(np.packbits(m.astype(np.uint8), axis=1))
        width, flat = packed.shape[1], packed.tobytes()
        keys = [flat[i : i + width] for i in range(0, len(flat), width)]
        lookup = self.key_to_family
        families = np.fromiter((lookup.get(key, -2) for key in keys), dtype=np.int64, count=len(keys))
        for i in np.flatnonzero(families == -2):
            families[i] = self._nearest(keys[i], m[i])
        return families

    def _nearest(self, key: bytes, mask: np.ndarray) -> int:
        """The family of an unseen mask: the best representative at Jaccard ``≥ tau_j``, else ``-1``
        (memoised per key: a rollout meets the same unseen masks step after step)."""
        memo = self._unseen
        if key not in memo:
            family = -1
            if self.representatives.shape[0]:
                scores = jaccard_to(mask, self.representatives)
                best = int(np.argmax(scores))
                family = best if scores[best] >= self.tau_j else -1
            memo[key] = family
        return memo[key]


def alignment_codebook(families: SupportFamilies) -> Codebook:
    """A runtime :class:`Codebook` whose representatives are the masks that opened the families."""
    if not isinstance(families, SupportFamilies):
        raise TypeError(f"families must be SupportFamilies; got {type(families).__name__}")
    return Codebook(dict(families.key_to_family), families.representatives.copy(), families.tau_j)


def routing_codebook(families: SupportFamilies, masks: object, source: object) -> Codebook:
    """The routing codebook: exact source keys, and each family's modal source mask as representative.

    ``masks`` are the masks ``families`` was fitted on (same order), ``source`` a boolean per mask marking
    the source states of transitions (all but each trajectory's last state). Only source masks enter the
    exact-key table; the first-seen mask wins ties for the mode. Families without a source mask are
    dropped, and the kept ones are renumbered ``0..F'-1`` in their fitted order, so a codebook's ids index
    its ``representatives`` (the paper keeps families with at least one transition).
    """
    if not isinstance(families, SupportFamilies):
        raise TypeError(f"families must be SupportFamilies; got {type(families).__name__}")
    m = _masks(masks)
    src = np.asarray(source)
    if src.dtype != bool or src.shape != (m.shape[0],):
        raise ValueError(
            f"source must be a boolean array of shape ({m.shape[0]},); got {src.dtype} {src.shape}"
        )
    if families.labels.shape != (m.shape[0],):
        raise ValueError("masks must be the collection the families were fitted on (same length)")
    key_to_family: dict[bytes, int] = {}
    per_family: dict[int, Counter[bytes]] = {}
    first_mask: dict[bytes, np.ndarray] = {}
    for row, key, label, is_source in zip(
        m, mask_keys(m), families.labels.tolist(), src.tolist(), strict=True
    ):
        if not is_source:
            continue
        first_mask.setdefault(key, row)
        key_to_family.setdefault(key, label)
        per_family.setdefault(label, Counter())[key] += 1
    kept = sorted(per_family)
    remap = {old: new for new, old in enumerate(kept)}
    reps = [first_mask[per_family[f].most_common(1)[0][0]] for f in kept]
    representatives = np.stack(reps) if reps else np.zeros((0, m.shape[1]), dtype=bool)
    return Codebook({k: remap[f] for k, f in key_to_family.items()}, representatives, families.tau_j)
