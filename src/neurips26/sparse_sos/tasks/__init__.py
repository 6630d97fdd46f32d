"""The chapter's six tasks, one module each, every one a seeded ``*_instance(size, seed, formulation)`` that
returns a :class:`~neurips26.sparse_sos.tasks.base.TaskInstance`: a chain quartic (:mod:`.chain_quartic`),
MaxCut's Shor relaxation on cycles, ladders and grids (:mod:`.maxcut`), an oscillator chain's certified
decay rate (:mod:`.oscillator`), SO(2) pose synchronisation (:mod:`.pose_sync`), a pendulum's SOS Lyapunov
margin (:mod:`.pendulum`) and a Putinar projection onto a non-convex planar set (:mod:`.projection`)."""
