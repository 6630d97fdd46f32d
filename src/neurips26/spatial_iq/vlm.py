"""A tiny vision-language model: a CNN turns each image into 36 prefix tokens, a 2-block decoder answers.

The stand-in for the paper's Qwen2.5-VL at laptop scale, with the same interface: images and a question
in, tokens out. Each 48 x 48 image passes three stride-2 convolutions (16, 32, 64 channels) to a 6 x 6 grid
of 64-d features, i.e. 36 tokens, plus a learned position per grid cell and per image slot (the rotation
questions show two images). The question tokens (:mod:`~neurips26.spatial_iq.tokens`) come first,
then the image tokens, then the answer, through two pre-norm :class:`~neurips26.nn.DecoderBlock` s of
width 64 with rotary positions and a causal mask; the output layer shares the token embedding. About
130k parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from neurips26.nn import DecoderBlock, DecoderConfig, KVCache, RotaryEmbedding, causal_mask, sample_next_token
from neurips26.spatial_iq.tokens import EOS, MAX_ANSWER, PAD, VOCAB
from neurips26.validation import check_int

#: Image tokens per image (a 6 x 6 grid).
GRID_TOKENS = 36
MAX_IMAGES = 2


@dataclass(frozen=True)
class VLMConfig:
    """Sizes: decoder width/depth/heads, CNN channels, image side, context (image tokens + text)."""

    width: int = 64
    depth: int = 2
    heads: int = 4
    channels: tuple[int, ...] = (16, 32, 64)
    image_size: int = 48
    mlp_ratio: float = 4.0

    def __post_init__(self) -> None:
        check_int("width", self.width, minimum=8)
        check_int("depth", self.depth, minimum=1)
        check_int("image_size", self.image_size, minimum=8)
        if self.channels[-1] != self.width:
            raise ValueError(f"channels must end at width={self.width}; got {self.channels}")
        if self.image_size // 2 ** len(self.channels) != 6:
            raise ValueError(f"image_size / 2**len(channels) must be 6 (36 tokens); got {self.image_size}")

    @property
    def context(self) -> int:
        return MAX_IMAGES * GRID_TOKENS + 2 + MAX_ANSWER

    def decoder(self) -> DecoderConfig:
        return DecoderConfig(
            vocab_size=len(VOCAB),
            width=self.width,
            depth=self.depth,
            heads=self.heads,
            context=self.context,
            mlp_ratio=self.mlp_ratio,
        )


class TinyVLM(nn.Module):
    """Question tokens, images (B, n, 48, 48, 3) in [0, 1], answer tokens → next-token logits."""

    def __init__(self, config: VLMConfig | None = None):
        super().__init__()
        self.config = config = config or VLMConfig()
        layers: list[nn.Module] = []
        c_in = 3
        for c in config.channels:
            layers += [nn.Conv2d(c_in, c, 3, stride=2, padding=1), nn.GELU()]
            c_in = c
        self.encoder = nn.Sequential(*layers[:-1])  # no activation on the last features
        self.grid_position = nn.Parameter(torch.zeros(GRID_TOKENS, config.width))
        self.image_slot = nn.Parameter(torch.zeros(MAX_IMAGES, config.width))
        nn.init.normal_(self.grid_position, std=0.02)
        nn.init.normal_(self.image_slot, std=0.02)
        dec = config.decoder()
        self.embed = nn.Embedding(len(VOCAB), config.width)
        nn.init.normal_(self.embed.weight, std=0.02)
        rotary = RotaryEmbedding(dec.head_dim, dec.context)
        self.blocks = nn.ModuleList(DecoderBlock(dec, rotary) for _ in range(config.depth))
        self.norm = nn.LayerNorm(config.width)

    @property
    def device(self) -> torch.device:
        return self.embed.weight.device

    def image_tokens(self, images: Tensor) -> Tensor:
        """(B, n, S, S, 3) → (B, 36 n, W)."""
        if images.dim() != 5 or images.shape[-1] != 3 or not 1 <= images.shape[1] <= MAX_IMAGES:
            raise ValueError(f"images must have shape (B, 1 or 2, S, S, 3); got {tuple(images.shape)}")
        b, n = images.shape[:2]
        x = images.reshape(b * n, *images.shape[2:]).permute(0, 3, 1, 2).to(self.device, torch.float32)
        f = self.encoder(x).flatten(2).transpose(1, 2)  # (B n, 36, W)
        f = f + self.grid_position
        f = f.reshape(b, n, GRID_TOKENS, -1) + self.image_slot[:n, None]
        return f.reshape(b, n * GRID_TOKENS, -1)

    def _run(self, x: Tensor, start: int, cache: KVCache | None) -> Tensor:
        length = x.shape[1]
        positions = torch.arange(start, start + length, device=x.device)
        mask = causal_mask(length, start + length, device=x.device)
        for i, block in enumerate(self.blocks):
            x, _ = block(x, positions=positions, mask=mask, cache=cache, layer=i, return_weights=False)
        return self.norm(x) @ self.embed.weight.T

    def prefix(self, images: Tensor, prompt: Tensor) -> Tensor:
        """The question, then the image tokens (B, P + 36 n, W): every image token is computed knowing the
        question, which a model this small needs to answer twelve different questions about one image."""
        return torch.cat([self.embed(prompt.to(self.device)), self.image_tokens(images)], dim=1)

    def forward(self, images: Tensor, prompt: Tensor, continuation: Tensor | None = None) -> Tensor:
        """Logits (B, C + 1, V) after question ``prompt`` (B, P) and images: row ``j`` predicts continuation
        token ``j`` (row ``C``, the token after the continuation)."""
        x = self.prefix(images, prompt)
        start = x.shape[1] - 1
        if continuation is not None and continuation.shape[1]:
            x = torch.cat([x, self.embed(continuation.to(self.device))], dim=1)
        return self._run(x, 0, None)[:, start:]


def answer_loss(model: TinyVLM, images: Tensor, prompt: Tensor, answer: Tensor) -> Tensor:
    """Mean cross-entropy of the ``answer`` tokens (B, A; PAD ignored) after the question and images."""
    logits = model(images, prompt, answer[:, :-1])
    target = answer.to(model.device)
    return nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), target.reshape(-1), ignore_index=PAD
    )


def completion_logprobs(model: TinyVLM, images: Tensor, prompt: Tensor, completion: Tensor) -> Tensor:
    """log π(token) of every ``completion`` token (B, A) after the question and images (0 at PAD)."""
    logits = model(images, prompt, completion[:, :-1])
    completion = completion.to(model.device)
    logp = torch.log_softmax(logits.float(), dim=-1).gather(-1, completion[..., None])[..., 0]
    return logp.masked_fill(completion == PAD, 0.0)


@torch.no_grad()
def generate(
    model: TinyVLM,
    images: Tensor,
    prompt: Tensor,
    *,
    max_new: int = MAX_ANSWER,
    strategy: str = "greedy",
    temperature: float = 1.0,
    generator: torch.Generator | None = None,
) -> Tensor:
    """Reply tokens (B, ≤ max_new), PAD after each row's EOS; a KV cache keeps it one token per step."""
    max_new = check_int("max_new", max_new, minimum=1)
    cache = KVCache(len(model.blocks))
    logits = model._run(model.prefix(images, prompt), 0, cache)[:, -1]
    out: list[Tensor] = []
    done = torch.zeros(prompt.shape[0], dtype=torch.bool, device=model.device)
    for _ in range(max_new):
        nxt = sample_next_token(logits, strategy=strategy, temperature=temperature, generator=generator)
        nxt = torch.where(done, torch.full_like(nxt, PAD), nxt)
        out.append(nxt)
        done |= nxt == EOS
        if bool(done.all()):
            break
        logits = model._run(model.embed(nxt[:, None]), cache.length, cache)[:, -1]
    return torch.stack(out, dim=1)


__all__ = [
    "GRID_TOKENS",
    "MAX_IMAGES",
    "TinyVLM",
    "VLMConfig",
    "answer_loss",
    "completion_logprobs",
    "generate",
]
