"""IOHP (chapter 18): furniture layouts a person can use, with inferred human proxies as keep-out zones and
as anchors in one differentiable objective.

The paper is known only from its abstract; the geometry, the objective and the metrics are reconstructions
in the line of LayoutVLM and Holodeck. Modules: ``layout`` (rooms, furniture, relations, layouts), ``rooms``
(procedural rooms and their rendering), ``geometry`` (oriented rectangles, the soft penetration measure, exact
overlap areas, distances), ``proxy`` (the proxy schema, rigid attachment, reference proxies, the offline
oracle and any ``neurips26.llm`` backend), ``initial`` (a rule-based stand-in for a model's initial layout,
with its mistakes), ``objective`` (the unified objective and its presets), ``optimize`` (Adam with restarts
and repair; simulated annealing) and ``metrics`` (collisions, bounds, proxy conflicts, accessibility).
"""
