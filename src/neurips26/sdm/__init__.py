"""Sparse Delta Memory (chapter 09): a gated delta-rule RNN whose state is a table of slots written and read
through exact product-key top-k, with its baselines (Gated DeltaNet, Mamba-2, attention). Import the
modules directly: ``product_keys``, ``gdn``, ``sdm``, ``mamba2``, ``models``, ``data``, ``training``,
``prepare``, ``experiments``, ``verdicts``."""
