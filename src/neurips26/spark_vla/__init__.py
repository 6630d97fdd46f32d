"""SPARK-VLA (chapter 17): a tiny VLA with a LoRA 3D pathway distilled from a 3D expert's attention maps,
and a token router supervised by action-loss gradients.

The paper is known only from its abstract; the design follows Spatial Forcing (Li, Song et al., arXiv
2510.12276) and VLA-Adapter (Wang, Ding et al., arXiv 2509.09372). The section marks in the docstrings name
the parts of the method as the chapter's method notebook presents them: §3.0 the data flow (candidates
C = [V2D + e2D; V3D + e3D]), §3.1 one encoder with two pathways (LoRA off and on), §3.2 spatial
representation distillation ((a) attention maps, the default; (b) attention responses), §3.3 the router and
its targets from action-loss gradients, §3.4 the action head and the L1 loss, §3.5 one training step, §3.6
inference.
"""
