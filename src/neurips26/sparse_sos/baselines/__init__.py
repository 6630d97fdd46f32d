"""The generic differentiable-SDP layers and gradients the chapter measures the sparse SOS layer against.

* :mod:`~neurips26.sparse_sos.baselines.cvxpylayers_sdp` — any block conic program as a cvxpy problem
  (one PSD matrix variable per block, one vectorised equality) in cvxpylayers 1.2, solved by SCS and
  differentiated by diffcp through the whole self-dual embedding. On a task's dense formulation it is
  "dense + cvxpylayers", on its sparse one "sparse + cvxpylayers".
* :mod:`~neurips26.sparse_sos.baselines.finite_differences` — central differences through re-solves
  (two solves per parameter), with the step rule for Clarabel's accuracy.
* :mod:`~neurips26.sparse_sos.baselines.unrolled_admm` — ``K`` ADMM iterations in torch, differentiated by
  autograd through every iteration; its saved-tensor memory grows linearly in ``K``.
* :mod:`~neurips26.sparse_sos.baselines.sdpr_rank_one` — an SDPRLayers-style gradient from a rank-one
  solution (the pose-synchronisation cross-check).
"""
