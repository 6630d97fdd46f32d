"""PICSB: a physics-informed conditional Schrödinger bridge for sparse-sensor data assimilation (chapter 06).

Reproduces "Sparsely-Supervised Data Assimilation via Physics-Informed Schrödinger Bridge" (Dohyun Bu,
Chanho Kim, Seokun Choi, Jong-Seok Lee; arXiv 2603.22319) on 1-D viscous Burgers: a paired bridge (I2SB)
carries a cheap low-fidelity (LF) simulation to a PDE-consistent high-fidelity (HF) field that honours a
few sensors, trained without any HF field (surrogate endpoints refreshed by the bridge itself).

The parts:

- :mod:`neurips26.picsb.burgers` — the HF pseudo-spectral Euler solver (64 points, 32 frames), the LF
  solver (8 points, 4× the step, 2× the viscosity) lifted by Fourier/linear interpolation, the scheme's
  one-step defect ``R``, the differentiable rollout ``solve`` and seeded initial conditions.
- :mod:`neurips26.picsb.observations` — sensor masks (4 irregular probe columns or a random 3 %) and
  observations ``y = M ⊙ (u + ξ)``.
- :mod:`neurips26.picsb.energy` — the auxiliary energy ``E = λ_R ‖R‖² + λ_o/(2σ_o²) ‖M ⊙ x − y‖² +
  λ_p ‖P_low(x − x_1)‖²``, the low-pass ``P_low`` and the hard projection ``M ⊙ x = y``.
- :mod:`neurips26.picsb.bridge` — the I2SB bridge: symmetric schedule, marginals, stochastic and OT-ODE
  samplers with hard sensor conditioning.
- :mod:`neurips26.picsb.denoiser` — the bridge's network: a circular 1-D U-Net over ``x`` with the 32
  frames of ``(x_t, x_1, M ⊙ y, M)`` as its 128 input channels and the target's 32 as output.
- :mod:`neurips26.picsb.cost_model` — declared FLOPs per case from layer shapes and FFT sizes (denoiser,
  ``solve``, ``residual``, ``E``) and the :class:`~neurips26.picsb.cost_model.Cost` ``(forwards, flops)``.
- :mod:`neurips26.picsb.metrics` — per-case scores (rel-L2 for scoring only, ``‖R‖``, sensor mismatch) and
  the :class:`~neurips26.picsb.metrics.Cost` record (NFEs, wall time).
- :mod:`neurips26.picsb.baselines` — the per-instance baselines: LF with sensors pasted, field-space
  test-time optimisation of ``E``, strong-constraint 4D-Var through the HF solver.
- :mod:`neurips26.picsb.picsb` — PICSB training without HF fields: the :class:`TrainingSet`, initial
  surrogates, rounds of ``fit`` on the bridge + residual + sensor loss with refreshes, ``reconstruct``.
- :mod:`neurips26.picsb.ablations` — the named ablations (no refresh, no PDE loss, soft observations, LF-only
  bridge) as variants of a ``PICSBConfig``, with ``train_variant`` / ``reconstruct_variant``.
- :mod:`neurips26.picsb.baselines.oracle_bridge` — the HF-trained oracle bridge: PICSB's bridge, loss,
  sampler and budget with the true HF fields as endpoints (the upper reference).
- :mod:`neurips26.picsb.baselines.dps` — DPS: an HF-trained DDPM prior guided on sensors and residual.

Import the modules directly (``from neurips26.picsb import burgers``); this file imports nothing, so a
module loads without the others.
"""
