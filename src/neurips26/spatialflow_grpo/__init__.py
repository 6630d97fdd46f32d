"""SpatialFlow-GRPO (chapter 08): region-level credit for RL of a flow-matching image editor. Import the
modules directly."""
