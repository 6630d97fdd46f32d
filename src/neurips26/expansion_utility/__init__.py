"""Expansion utility (chapter 11): which step of a reasoning chain repays a resample, measured on a step-wise
solver, and routers that learn to send the compute there. Import the modules directly: ``simulator``,
``utility``, ``stats``, ``allocation``, ``router``, ``router_fit``, ``baselines``, ``sweep``, ``lofo``,
``prepare``, ``verdicts``, ``llm_chains``, ``experiments``."""
