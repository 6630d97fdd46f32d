"""Differentiable sparse sum-of-squares layers (chapter 03).

Sparse polynomials and monomial bases (:mod:`~neurips26.sparse_sos.polynomial`); correlative and term
sparsity (:mod:`~neurips26.sparse_sos.sparsity`); ``svec`` conventions (:mod:`~neurips26.sparse_sos.svec`);
the block conic program (:mod:`~neurips26.sparse_sos.conic`) and the SOS program assembled into it
(:mod:`~neurips26.sparse_sos.assemble`); native Clarabel and SCS solves (:mod:`~neurips26.sparse_sos.solve`);
the PSD projection and its derivative (:mod:`~neurips26.sparse_sos.psd`); Danskin's gradient and the
structured adjoint (:mod:`~neurips26.sparse_sos.backward`); the torch layer
(:mod:`~neurips26.sparse_sos.layer`); the declared cost model (:mod:`~neurips26.sparse_sos.cost_model`);
the chapter's tasks (:mod:`~neurips26.sparse_sos.tasks`).
"""
