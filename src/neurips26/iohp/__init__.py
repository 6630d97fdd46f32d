"""IOHP (chapter 18): furniture layouts a person can use, with inferred human proxies as keep-out zones and
as anchors in one differentiable objective.

The paper is known only from its abstract; the geometry, the objective and the metrics are reconstructions
in the line of LayoutVLM and Holodeck. The section marks in the docstrings name the parts of the method as
the chapter presents them (``chapters/18-iohp``): §3.1 the scene (rooms, doors and their swing zones,
furniture poses), §3.2 the human proxy (schema, rigid attachment, zero-shot inference), §3.3 the unified
objective, §3.4 the soft penetration measure, §3.5 the optimiser, §3.6 the pipeline from a model's proposal
to a layout, §4 the baselines, §7.1 the procedural data (scenes and corpus), §7.3 the metrics.

Modules: ``layout`` (rooms, furniture, relations, layouts), ``rooms`` (procedural rooms and their
rendering), ``geometry`` (oriented rectangles, the soft penetration measure, exact overlap areas,
distances), ``proxy`` (the proxy schema, rigid attachment, reference proxies, the offline oracle and any
``neurips26.llm`` backend), ``initial`` (a rule-based stand-in for a model's initial layout, with its
mistakes), ``objective`` (the unified objective and its presets), ``optimize`` (Adam with restarts, repair
and legalisation; simulated annealing), ``metrics`` (collisions, bounds, proxy conflicts, accessibility,
functional and semantic satisfaction), ``corpus`` (the procedural training corpus with its usability
flaws), ``baselines`` (random poses, ATISS-, LayoutGPT- and Holodeck-style, a uniform clearance),
``prepare`` (the ATISS-style checkpoint), ``experiments`` (every method on one scene set), ``verdicts``
(the claims' criteria) and ``figures`` (floor plans).
"""
