"""JAG: a joint appearance-geometry video diffusion transformer with Self Geometry Forcing (chapter 07).

Reproduces, at CPU scale, the method of the NeurIPS 2026 paper "JAG, Joint Appearance-Geometry Diffusion
Transformer with Self Geometry Forcing" (only its abstract is known): a causal video DiT that denoises RGB
and depth together, is distilled into a few-step generator on its own rollouts, and keeps its own predicted
geometry as a fixed-size 3D memory with a self-verified reward. The world is procedural rooms seen by a
16 × 16 pinhole camera along controlled paths.

The parts (this package is being built; the chapter's notebooks are not written yet):

- :mod:`neurips26.jag.paths` — camera paths (yaw sweeps, dollies, orbits, out-and-back loops) and revisit
  pairs; :mod:`neurips26.jag.scenes` — rooms, rendered clips (RGB, log z-depth, validity) and the splits.
- :mod:`neurips26.jag.geometry` — batched torch pinhole geometry equal to ``neurips26.world.Camera``:
  unprojection, projection, Plücker rays per patch.
- :mod:`neurips26.jag.memory` — the fixed-size voxel memory (and a FIFO point buffer) with a z-buffered splat.
- :mod:`neurips26.jag.model` — the dual-branch DiT: per-branch weights, one joint attention, block-causal
  window with a KV cache, bidirectional teacher mode.
- :mod:`neurips26.jag.diffusion_forcing` — the many-step base models (Diffusion Forcing, Teacher Forcing,
  the bidirectional teacher) and their samplers, on :mod:`neurips26.flow`.
- :mod:`neurips26.jag.self_forcing` — the 4-step causal student: rollouts with exit-step truncation, DMD with
  an online critic, ODE initialisation.
- :mod:`neurips26.jag.sgf` — Self Geometry Forcing: the self-built memory, the geometric reward and the
  distillation loop shared by the distilled models.
- :mod:`neurips26.jag.metrics` — revisit PSNR, co-visible PSNR and AbsRel, drift slopes, reprojection error;
  :mod:`neurips26.jag.cost_model` — keys per query, FLOPs per frame, memory bytes.

Import the modules directly (``from neurips26.jag import model``); this file imports nothing.
"""
