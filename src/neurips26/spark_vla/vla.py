"""The chapter's tiny vision-language-action policy: a projector, a 2-block causal "LM" and an action head.

It stands in for the paper's 0.5B language backbone and action head (§3.0, §3.4). The visual
tokens it receives are candidates ``c_i`` of the two encoder pathways, each tagged with a branch embedding
and the position of the patch it came from (§3.0)::

    C = [V2D + e2D + P ; V3D + e3D + P]                      (B, 2N, d_v)   P = patch positions (N, d_v)

Any subset ``C_S`` (all, routed top-k, random-k ...) goes through the projector ``c~ = proj(c)`` and, scaled
by the multiplicative gates ``m_i`` of §3.3, into one causal sequence::

    x = [ words(l) + E_l  (L) ;  c~ * m  (M) ;  queries  (H) ;  W_p q  (1) ]     T = L + M + H + 1
    x <- DecoderBlock_j(x)   j = 0, 1        (causal mask; padding words are never attended)
    a^_h = MLP([LN(x)_{query h} ; LN(x)_{proprio}])      (B, H, 4)
    L_act = (1 / (H d_a)) || a^ - a ||_1                                            (§3.4)

With ``m = 1`` the gated and ungated passes are the same computation, and ``dL/dm_i = g_i . c~_i`` with
``g_i = dL/d(c~_i m_i)``: minus the gate gradient is the first-order Taylor score ``s_i = -g_i . c~_i`` of
§3.3 that supervises the router. Nothing in the sequence carries an index-based position embedding: the
words carry ``E_l``, a visual token carries its patch position and branch, each action query is its own
vector and the causal order does the rest, so a routed subset of any size ``M`` needs no renumbering.

Masking. Query ``i`` sees key ``j`` iff ``j <= i`` and ``j`` is not a padding word, or ``j = i``. The
diagonal is always open: without it a padding word at position 0 (or every word of an all-padding
instruction) would see no key at all; the explicit softmax (the path ``return_attention`` takes) then gives
0/0 = NaN, a NaN value is not silenced by a zero attention weight (0 * NaN = NaN), and how the fused kernel
treats an empty row is a version detail one should not lean on. The visual tokens do not rescue such a row,
since they come after the instruction. Padding positions attend only to earlier words and themselves, and
no other position reads them, so the embedding of id 0 cannot change any output.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch
from torch import Tensor, nn

from neurips26.nn import DecoderBlock, DecoderConfig, causal_mask
from neurips26.nn.embeddings import check_ids
from neurips26.validation import check_float, check_int, check_seed

#: Width of the proprioceptive input (end-effector x, y, z in metres).
PROPRIO_DIM = 3
#: Standard deviation of the GPT-2-style initialisation used for every weight of the policy.
INIT_STD = 0.02


@dataclass(frozen=True)
class PolicyConfig:
    """Sizes of a :class:`Policy`.

    width: LM width d; lm_depth: decoder blocks; heads: attention heads (divide d); chunk: actions per
    prediction H; action_dim: numbers per action (dx, dy, dz, gripper); vocab_size: words, id 0 = padding;
    instruction_length: L; num_patches: N patch tokens per pathway; mlp_ratio: MLP hidden / d;
    vision_width: width of the candidate tokens (the ViT's, 64), ``None`` = ``width``. The LM is 48 wide
    (development runs at 64 reached a few points more success, within the seed spread, but twenty
    checkpoints of the 64-wide policy do not fit the chapter's 6 MB of package data).
    """

    width: int = 48
    lm_depth: int = 2
    heads: int = 4
    chunk: int = 4
    action_dim: int = 4
    vocab_size: int = 30
    instruction_length: int = 8
    num_patches: int = 36
    mlp_ratio: float = 4.0
    vision_width: int | None = 64

    def __post_init__(self) -> None:
        check_int("width", self.width, minimum=1)
        check_int("lm_depth", self.lm_depth, minimum=1)
        check_int("heads", self.heads, minimum=1)
        check_int("chunk", self.chunk, minimum=1)
        check_int("action_dim", self.action_dim, minimum=1)
        check_int("vocab_size", self.vocab_size, minimum=2)
        check_int("instruction_length", self.instruction_length, minimum=1)
        check_int("num_patches", self.num_patches, minimum=1)
        check_float("mlp_ratio", self.mlp_ratio, minimum=0.0, strict_min=True)
        if self.width % self.heads:
            raise ValueError(f"heads must divide width; got width={self.width}, heads={self.heads}")
        if round(self.mlp_ratio * self.width) < 1:
            raise ValueError(f"mlp_ratio * width must be >= 1; got {self.mlp_ratio} * {self.width}")
        if self.vision_width is None:
            object.__setattr__(self, "vision_width", self.width)
        check_int("vision_width", self.vision_width, minimum=1)

    @property
    def head_dim(self) -> int:
        """Size of one attention head, width // heads."""
        return self.width // self.heads

    @property
    def num_candidates(self) -> int:
        """2N: the candidates of both pathways."""
        return 2 * self.num_patches

    @property
    def context(self) -> int:
        """Sequence length with every candidate forwarded: L + 2N + H + 1."""
        return self.instruction_length + self.num_candidates + self.chunk + 1

    def decoder(self) -> DecoderConfig:
        """The :class:`~neurips26.nn.DecoderConfig` of the LM blocks (absolute positions: no RoPE)."""
        return DecoderConfig(
            vocab_size=self.vocab_size,
            width=self.width,
            depth=self.lm_depth,
            heads=self.heads,
            context=self.context,
            mlp_ratio=self.mlp_ratio,
            positions="learned",
        )


@dataclass(frozen=True)
class PolicyOutput:
    """What :meth:`Policy.forward` returns.

    actions: (B, H, action_dim). projected: (B, M, d) the projected visual tokens c~ before the gates.
    attention: (B, heads, T, T) softmax weights of LM block 0, or None. visual_states: (B, M, d) the
    residual stream at the visual positions after block 0, or None. hidden_states: ``lm_depth + 1``
    tensors (B, T, d), the stream entering block 0 and leaving each block (before the final norm), or None.
    """

    actions: Tensor
    projected: Tensor
    attention: Tensor | None = None
    visual_states: Tensor | None = None
    hidden_states: tuple[Tensor, ...] | None = None


def _check_float_tensor(name: str, value: object, shape: tuple[int | None, ...]) -> Tensor:
    """A floating tensor whose shape matches ``shape`` (``None`` = any size >= 1)."""
    want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape {want}; got {type(value).__name__}")
    if not value.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor; got dtype {value.dtype}")
    fits = value.dim() == len(shape) and all(
        (s is None and v >= 1) or s == v for s, v in zip(shape, value.shape, strict=True)
    )
    if not fits:
        raise ValueError(f"{name} must have shape {want}; got {tuple(value.shape)}")
    return value


def grid_sincos(num_patches: int, width: int) -> Tensor:
    """Fixed 2D sine-cosine embedding of a square patch grid (num_patches, width), the initial patch
    positions: half the channels encode the column, half the row, at geometric frequencies (as in MAE), so
    a routed token's place on the grid is linearly readable from the start."""
    side = math.isqrt(num_patches)
    if side * side != num_patches or width % 4:
        raise ValueError(
            f"grid_sincos needs a square grid and a width divisible by 4; got {num_patches}, {width}"
        )
    quarter = width // 4
    freq = 1.0 / (100.0 ** (torch.arange(quarter, dtype=torch.float64) / quarter))
    rows, cols = torch.meshgrid(
        torch.arange(side, dtype=torch.float64), torch.arange(side, dtype=torch.float64), indexing="ij"
    )
    parts = []
    for coord in (cols.reshape(-1), rows.reshape(-1)):
        angle = coord[:, None] * freq[None] * (math.pi / side)
        parts += [torch.sin(angle), torch.cos(angle)]
    return torch.cat(parts, dim=1).float()


def _normal_(tensor: Tensor, std: float, generator: torch.Generator) -> None:
    with torch.no_grad():
        tensor.normal_(0.0, std, generator=generator)


def _init_linears(
    module: nn.Module, generator: torch.Generator, *, residual_std: float | None = None
) -> None:
    """Weights N(0, INIT_STD²) (``attn.out``/``mlp.proj`` with ``residual_std``), biases 0."""
    for name, sub in module.named_modules():
        if isinstance(sub, nn.Linear | nn.Embedding):
            residual = residual_std is not None and name.endswith(("attn.out", "mlp.proj"))
            _normal_(sub.weight, residual_std if residual else INIT_STD, generator)
        if isinstance(sub, nn.Linear) and sub.bias is not None:
            nn.init.zeros_(sub.bias)


class Policy(nn.Module):
    """Instruction (B, L) ids, visual tokens (B, M, d_v), proprio (B, 3) -> an action chunk (B, H, 4).

    Weights are a function of ``seed`` only (GPT-2 scheme: N(0, 0.02²), residual projections
    0.02 / sqrt(2 lm_depth), biases 0, padding word 0); modules are built inside ``torch.random.fork_rng``
    and initialised from a private generator, so the caller's random state is left as it was.
    """

    def __init__(self, config: PolicyConfig | None = None, *, seed: int = 0):
        super().__init__()
        config = PolicyConfig() if config is None else config
        if not isinstance(config, PolicyConfig):
            raise TypeError(f"config must be a PolicyConfig; got {type(config).__name__}")
        self.config = config
        self.seed = check_seed("seed", seed)
        d, dv = config.width, config.vision_width
        generator = torch.Generator().manual_seed(self.seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            self.words = nn.Embedding(config.vocab_size, d, padding_idx=0)
            self.instruction_positions = nn.Parameter(torch.empty(config.instruction_length, d))
            self.branch = nn.Parameter(torch.empty(2, dv))  # rows: e2D, e3D
            self.patch_positions = nn.Parameter(torch.empty(config.num_patches, dv))
            self.projector = nn.Sequential(nn.LayerNorm(dv), nn.Linear(dv, d), nn.GELU(), nn.Linear(d, d))
            self.queries = nn.Parameter(torch.empty(config.chunk, d))
            self.proprio = nn.Linear(PROPRIO_DIM, d)
            decoder = config.decoder()
            self.blocks = nn.ModuleList(DecoderBlock(decoder, None) for _ in range(config.lm_depth))
        for parameter in (self.instruction_positions, self.branch, self.queries):
            _normal_(parameter, INIT_STD, generator)
        with torch.no_grad():
            self.patch_positions.copy_(grid_sincos(config.num_patches, dv))
        _init_linears(self, generator, residual_std=INIT_STD / math.sqrt(2 * config.lm_depth))
        with torch.no_grad():
            self.words.weight[0].zero_()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            self._build_action_head(generator)

    # -------------------------------------------------------------------------------- the action head

    def _build_action_head(self, generator: torch.Generator) -> None:
        """Final LayerNorm and the MLP head on [query state; proprio state] (2d -> 2d -> GELU -> d_a)."""
        d = self.config.width
        self.final_norm = nn.LayerNorm(d)
        self.head = nn.Sequential(
            nn.Linear(2 * d, 2 * d), nn.GELU(), nn.Linear(2 * d, self.config.action_dim)
        )
        _init_linears(self.head, generator)

    def _act(self, hidden: list[Tensor], instruction: Tensor, layout: dict[str, slice]) -> Tensor:
        """Actions (B, H, d_a) from the residual streams ``hidden`` (``lm_depth + 1`` tensors (B, T, d))."""
        final = self.final_norm(hidden[-1])
        queries = final[:, layout["queries"]]  # (B, H, d)
        proprio = final[:, layout["proprio"]].expand_as(queries)  # (B, H, d)
        return self.head(torch.cat([queries, proprio], dim=-1))

    # ------------------------------------------------------------------------------ candidate tokens

    @property
    def device(self) -> torch.device:
        return self.queries.device

    def candidates(self, v2d: Tensor, v3d: Tensor | None = None) -> Tensor:
        """C = [V2D + e2D + P; V3D + e3D + P] (B, 2N, d_v), or V2D + e2D + P (B, N, d_v) without ``v3d``.

        ``v2d``, ``v3d``: (B, N, d_v) patch tokens of the two pathways (or any tokens that take the 3D
        slot, e.g. depth tokens of the explicit-depth baseline).
        """
        n, dv = self.config.num_patches, self.config.vision_width
        v2d = _check_float_tensor("v2d", v2d, (None, n, dv))
        blocks = [v2d + self.branch[0] + self.patch_positions]
        if v3d is not None:
            v3d = _check_float_tensor("v3d", v3d, (v2d.shape[0], n, dv))
            blocks.append(v3d + self.branch[1] + self.patch_positions)
        return torch.cat(blocks, dim=1)

    def _check_candidate_count(self, num_candidates: int) -> int:
        n = self.config.num_patches
        num_candidates = check_int("num_candidates", num_candidates, minimum=1)
        if num_candidates not in (n, 2 * n):
            raise ValueError(f"num_candidates must be N = {n} or 2N = {2 * n}; got {num_candidates}")
        return num_candidates

    def candidate_patch(self, num_candidates: int) -> Tensor:
        """(M,) int64: the patch index (0 .. N-1) each of the M = N or 2N candidates came from."""
        m = self._check_candidate_count(num_candidates)
        return torch.arange(m, device=self.device) % self.config.num_patches

    def candidate_branch(self, num_candidates: int) -> Tensor:
        """(M,) int64: 0 for a 2D-pathway candidate, 1 for a 3D-pathway one."""
        m = self._check_candidate_count(num_candidates)
        return (torch.arange(m, device=self.device) >= self.config.num_patches).long()

    @staticmethod
    def gather(candidates: Tensor, indices: Tensor) -> Tensor:
        """The rows ``indices`` (B, k) of ``candidates`` (B, M, d), in that order: (B, k, d)."""
        if not isinstance(candidates, Tensor) or candidates.dim() != 3:
            got = getattr(candidates, "shape", type(candidates).__name__)
            raise ValueError(f"candidates must have shape (B, M, d); got {got}")
        batch, m, width = candidates.shape
        indices = check_ids("indices", indices, m)
        if indices.dim() != 2 or indices.shape[0] != batch:
            raise ValueError(f"indices must have shape (B, k) = ({batch}, k); got {tuple(indices.shape)}")
        index = indices.long().unsqueeze(-1).expand(batch, indices.shape[1], width)
        return candidates.gather(1, index)

    # ----------------------------------------------------------------------------------- the sequence

    def layout(self, num_visual: int) -> dict[str, slice]:
        """Positions of the parts in the LM sequence for M = ``num_visual`` visual tokens.

        ``instruction`` [0, L), ``visual`` [L, L+M), ``queries`` [L+M, L+M+H), ``proprio`` [L+M+H, T).
        """
        m = check_int("num_visual", num_visual, minimum=1)
        length, chunk = self.config.instruction_length, self.config.chunk
        return {
            "instruction": slice(0, length),
            "visual": slice(length, length + m),
            "queries": slice(length + m, length + m + chunk),
            "proprio": slice(length + m + chunk, length + m + chunk + 1),
        }

    def _check_instruction(self, instruction: object) -> Tensor:
        instruction = check_ids("instruction", instruction, self.config.vocab_size)
        length = self.config.instruction_length
        if instruction.dim() != 2 or instruction.shape[1] != length or instruction.shape[0] < 1:
            raise ValueError(
                f"instruction must have shape (B, L) = (B, {length}); got {tuple(instruction.shape)}"
            )
        return instruction.long()

    def attention_mask(self, instruction: Tensor, num_visual: int) -> Tensor:
        """Boolean (B, 1, T, T), True = may attend: causal, padding words hidden, the diagonal always open."""
        instruction = self._check_instruction(instruction)
        m = check_int("num_visual", num_visual, minimum=1)
        batch = instruction.shape[0]
        total = self.config.instruction_length + m + self.config.chunk + 1
        device = instruction.device
        key_ok = torch.cat(
            [
                instruction != 0,
                torch.ones(batch, total - instruction.shape[1], dtype=torch.bool, device=device),
            ],
            dim=1,
        )  # (B, T)
        diagonal = torch.eye(total, dtype=torch.bool, device=device)
        mask = causal_mask(total, device=device) & (key_ok[:, None, :] | diagonal)  # (B, T, T)
        return mask[:, None]

    def instruction_vector(self, instruction: Tensor) -> Tensor:
        """u (B, d): the mean word embedding over the non-padding words (zeros for an all-padding row)."""
        instruction = self._check_instruction(instruction)
        keep = (instruction != 0).to(self.words.weight.dtype)[..., None]  # (B, L, 1)
        total = (self.words(instruction) * keep).sum(dim=1)
        return total / keep.sum(dim=1).clamp_min(1.0)

    def forward(
        self,
        instruction: Tensor,
        visual: Tensor,
        proprio: Tensor,
        *,
        gates: Tensor | None = None,
        return_attention: bool = False,
        return_visual_states: bool = False,
        return_hidden: bool = False,
    ) -> PolicyOutput:
        """Action chunk for ``instruction`` (B, L) ids, ``visual`` (B, M, d_v) candidates, ``proprio`` (B, 3).

        ``gates`` (B, M) multiplies each projected token before it enters the LM (§3.3); ``None`` is the
        ungated pass, numerically identical to ``gates = 1``. ``return_attention`` computes block 0's
        weights explicitly (the fused kernel otherwise), which can move the outputs in the last bits.
        """
        config = self.config
        instruction = self._check_instruction(instruction)
        batch = instruction.shape[0]
        visual = _check_float_tensor("visual", visual, (batch, None, config.vision_width))
        proprio = _check_float_tensor("proprio", proprio, (batch, PROPRIO_DIM))
        m = visual.shape[1]
        if gates is not None:
            gates = _check_float_tensor("gates", gates, (batch, m))

        projected = self.projector(visual)  # c~ (B, M, d)
        lm_visual = projected if gates is None else projected * gates[..., None]
        words = self.words(instruction) + self.instruction_positions
        queries = self.queries.expand(batch, -1, -1)
        x = torch.cat([words, lm_visual, queries, self.proprio(proprio)[:, None]], dim=1)
        mask = self.attention_mask(instruction, m)
        layout = self.layout(m)

        hidden, attention = [x], None
        for layer, block in enumerate(self.blocks):
            want = return_attention and layer == 0
            x, weights = block(x, positions=None, mask=mask, cache=None, layer=layer, return_weights=want)
            if want:
                attention = weights
            hidden.append(x)
        actions = self._act(hidden, instruction, layout)
        return PolicyOutput(
            actions=actions,
            projected=projected,
            attention=attention,
            visual_states=hidden[1][:, layout["visual"]] if return_visual_states else None,
            hidden_states=tuple(hidden) if return_hidden else None,
        )


def action_loss(pred: Tensor, target: Tensor) -> Tensor:
    """L_act = mean |pred - target| over (B, H, d_a) (§3.4); a scalar."""
    if not isinstance(pred, Tensor) or pred.dim() != 3:
        raise ValueError(
            f"pred must have shape (B, H, d_a); got {getattr(pred, 'shape', type(pred).__name__)}"
        )
    if not isinstance(target, Tensor) or target.shape != pred.shape:
        got = getattr(target, "shape", type(target).__name__)
        raise ValueError(f"target must have the shape of pred {tuple(pred.shape)}; got {got}")
    return (pred - target.to(pred.dtype)).abs().mean()


def _unique_parameters(modules: tuple[nn.Module, ...]) -> list[nn.Parameter]:
    seen: dict[int, nn.Parameter] = {}
    for i, module in enumerate(modules):
        if not isinstance(module, nn.Module):
            raise TypeError(f"modules[{i}] must be a torch.nn.Module; got {type(module).__name__}")
        for parameter in module.parameters():
            seen.setdefault(id(parameter), parameter)
    return list(seen.values())


def count_trainable(*modules: nn.Module) -> int:
    """Numbers in the parameters with ``requires_grad`` of ``modules``, a shared parameter counted once."""
    return sum(p.numel() for p in _unique_parameters(modules) if p.requires_grad)


def count_parameters(*modules: nn.Module) -> int:
    """Numbers in all parameters of ``modules``, trainable or frozen, a shared parameter counted once."""
    return sum(p.numel() for p in _unique_parameters(modules))


def larger_config(config: PolicyConfig | None = None) -> PolicyConfig:
    """The "larger VLA" stand-in: the LM twice as wide (about 4x its parameters), head size unchanged.

    The candidate tokens keep the encoder's width (``vision_width``); only the projector's output, the
    LM and the head widen. With the default config (48 wide) the LM blocks grow from 56,544 to 223,680
    parameters (x3.96), the whole policy from 76,580 to 284,228.
    """
    config = PolicyConfig() if config is None else config
    if not isinstance(config, PolicyConfig):
        raise TypeError(f"config must be a PolicyConfig; got {type(config).__name__}")
    width = 2 * config.width
    return replace(config, width=width, heads=width // config.head_dim, vision_width=config.vision_width)


__all__ = [
    "INIT_STD",
    "PROPRIO_DIM",
    "Policy",
    "PolicyConfig",
    "PolicyOutput",
    "action_loss",
    "count_parameters",
    "count_trainable",
    "larger_config",
]
