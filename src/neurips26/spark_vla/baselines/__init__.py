"""Baseline models of chapter 17: the VLA-Adapter-style bridge-attention policy and explicit depth tokens."""

from neurips26.spark_vla.baselines.bridge import BridgeHead, BridgeLayer, BridgePolicy
from neurips26.spark_vla.baselines.depth_oracle import DepthTokens

__all__ = ["BridgeHead", "BridgeLayer", "BridgePolicy", "DepthTokens"]
