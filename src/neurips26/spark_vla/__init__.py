"""SPARK-VLA (chapter 17): a tiny VLA with a LoRA 3D pathway distilled from a 3D expert's attention maps,
and a token router supervised by action-loss gradients."""
