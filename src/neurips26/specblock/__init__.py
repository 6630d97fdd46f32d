"""SpecBlock (chapter 10): block-iterative speculative decoding with dynamic tree drafting.

The decoding loop and the drafters meet in :mod:`~neurips26.specblock.protocol`. The target and its
distillation data are in :mod:`.data` and :mod:`.target`; tree verification and the lossless greedy loop in
:mod:`.tree` and :mod:`.decode`; SpecBlock itself in :mod:`.drafter`, :mod:`.rank_head`, :mod:`.losses`,
:mod:`.train_drafter` and :mod:`.dynamic_tree`; the baselines in :mod:`.baselines`; the declared GPU-like
cost model of drafting in :mod:`.cost_model`; the
adaptation bandit in :mod:`.bandit` and :mod:`.adaptation`; checkpoints in :mod:`.prepare`; the chapter's
experiments in :mod:`.experiments` and :mod:`.explore`.
"""

from neurips26.specblock.adaptation import StreamResult
from neurips26.specblock.bandit import (
    ARMS,
    CostAwareBandit,
    EveryWindowPolicy,
    ReplayBuffer,
    StaticPolicy,
    UpdateConfig,
    update_drafter,
)
from neurips26.specblock.baselines.eagle3 import Eagle3Config, Eagle3Drafter, Eagle3Proposer, train_eagle3
from neurips26.specblock.baselines.medusa import MedusaConfig, MedusaHeads, MedusaProposer, train_medusa
from neurips26.specblock.cost_model import DrafterCost, cost_model_speedup, drafter_cost
from neurips26.specblock.data import ALPHABET, DOMAINS, DistillData, documents, prompts, tokenizer
from neurips26.specblock.decode import GenerationResult, speculative_generate, vanilla_generate
from neurips26.specblock.drafter import SpecBlockConfig, SpecBlockDrafter, block_mask, shift_slots
from neurips26.specblock.dynamic_tree import DEFAULT_BUDGETS, SpecBlockProposer, plan_block
from neurips26.specblock.experiments import (
    ShiftConfig,
    SuiteConfig,
    decode_suite,
    domain_shift_stream,
    per_depth_acceptance,
    run_claims,
    slot_accuracy,
)
from neurips26.specblock.losses import chain_mask, draft_loss, rank_loss, smoothed_rank_targets
from neurips26.specblock.metrics import (
    DecodeStats,
    acceptance_length,
    measured_speedup,
    modelled_speedup,
    summarize,
)
from neurips26.specblock.prepare import PrepareConfig, pretrained
from neurips26.specblock.protocol import (
    DecodeContext,
    DraftTree,
    Proposal,
    Proposer,
    fused_features,
    target_outputs,
)
from neurips26.specblock.rank_head import RankHead, rank_class
from neurips26.specblock.target import TargetConfig, distill, train_target
from neurips26.specblock.train_drafter import DrafterTraining, train_specblock
from neurips26.specblock.tree import VerifyResult, prune, verify

__all__ = [
    "ARMS",
    "CostAwareBandit",
    "DrafterCost",
    "cost_model_speedup",
    "drafter_cost",
    "EveryWindowPolicy",
    "ReplayBuffer",
    "StaticPolicy",
    "UpdateConfig",
    "update_drafter",
    "StreamResult",
    "ShiftConfig",
    "SuiteConfig",
    "decode_suite",
    "domain_shift_stream",
    "run_claims",
    "slot_accuracy",
    "PrepareConfig",
    "pretrained",
    "ALPHABET",
    "DEFAULT_BUDGETS",
    "DOMAINS",
    "DecodeContext",
    "DecodeStats",
    "DistillData",
    "DraftTree",
    "DrafterTraining",
    "Eagle3Config",
    "Eagle3Drafter",
    "Eagle3Proposer",
    "GenerationResult",
    "MedusaConfig",
    "MedusaHeads",
    "MedusaProposer",
    "Proposal",
    "Proposer",
    "RankHead",
    "SpecBlockConfig",
    "SpecBlockDrafter",
    "SpecBlockProposer",
    "TargetConfig",
    "VerifyResult",
    "acceptance_length",
    "block_mask",
    "chain_mask",
    "distill",
    "documents",
    "draft_loss",
    "fused_features",
    "measured_speedup",
    "modelled_speedup",
    "per_depth_acceptance",
    "plan_block",
    "prompts",
    "prune",
    "rank_class",
    "rank_loss",
    "shift_slots",
    "smoothed_rank_targets",
    "speculative_generate",
    "summarize",
    "target_outputs",
    "tokenizer",
    "train_eagle3",
    "train_medusa",
    "train_specblock",
    "train_target",
    "vanilla_generate",
    "verify",
]
