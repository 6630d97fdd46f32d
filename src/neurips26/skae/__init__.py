"""SKAE: sparse Koopman autoencoders whose active latent coordinates mark the basin (chapter 04).

Reproduces "Sparse Koopman Supports for Multibasin Forecasting and Transductive Regime Alignment"
(anonymous NeurIPS 2026 submission; source and code in the authors' repository ``aidanmrli/skae``).

The parts:

- :mod:`neurips26.skae.systems` — RK4 stored-step maps; the Gaussian-well family (Square four-well,
  High-cross three-well, Asymmetric three-well, Transition-routes four-well, seeded random instances);
  Local-linear gates with native labels; the Shimizu-Morioka, Sakarya, Lorenz-63 and Lorenz-96 flows;
  nearest-centre proxy labels, the centre margin ``d2 - d1``, and the hard-pool training reset.

- :mod:`neurips26.skae.model` — :class:`~neurips26.skae.model.KAE` with a LISTA, sparse-MLP, dense-MLP
  or top-k encoder and a dense, block or soft-block transition ``K``.
- :mod:`neurips26.skae.losses` — the prediction, reconstruction, linearity and sparsity terms.
- :mod:`neurips26.skae.rollout` — rollouts with no, every-step or periodic re-encoding; the paper's best
  periodic cadence and the cadence frozen on validation starts; MSE through a horizon.
- :mod:`neurips26.skae.supports` — support rules and greedy Jaccard families (alignment and routing).

- :mod:`neurips26.skae.data` — training windows drawn fresh per step (hard-pool or uniform resets;
  standardised cuts of cached trajectories on the flows), seeded evaluation sets on disjoint streams.
- :mod:`neurips26.skae.prepare` — the model table of the claims (109 models), trained with
  :func:`neurips26.train.fit` (K at 0.1× the rate, undecayed) and shipped as float16 checkpoints through
  the checkpoint registry (``python -m neurips26.skae.prepare``).

- :mod:`neurips26.skae.metrics` — MSE through H, IQM, NRMSE, H(B|F) on the high-margin slice, ARI/NMI/
  purity, asymptotic-basin accuracy.
- :mod:`neurips26.skae.routing` — the staged model (local maps per support family on a frozen E, D, K),
  support and control routers (oracle, random count-matched, latent k-means), gated and frozen-gate steps.
- :mod:`neurips26.skae.interventions` — drop the top-k latent coordinates, move or permute the active
  values.
- :mod:`neurips26.skae.theory` — the basin indicator and the collapse demo (a continuous lift cannot
  settle in several basins; a basin-gated one can).

- :mod:`neurips26.skae.baselines` — DMD, polynomial and RBF EDMD, k-means / GMM / soft-GMM local-linear
  maps, state-space k-means, the consistent KAE and the oracle mixture of KAEs, behind one
  ``fit(windows)`` / ``predict(x0, horizon, period)`` interface.

- :mod:`neurips26.skae.experiments` — one runner per claim family (forecast k1/k3, alignment k2/k7,
  routing k4, identity k5, chaos k6), and :mod:`neurips26.skae.verdicts`, their criteria.

The 109 default-scale checkpoints ship in ``checkpoints/``; the chapter's notebooks are in
``chapters/04-skae/``.
"""
