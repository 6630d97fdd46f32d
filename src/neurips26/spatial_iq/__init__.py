"""Chapter 15: Spatial-IQ — does a model count stacked, partly hidden blocks for the right reasons?

A procedural benchmark splits "count every block, hidden supports included" into nine sub-tasks and two
targets, scores whether a responder's answers compose as they should, and trains a tiny vision-language
model four ways (backbone, SFT on the total, SFT on a chain of sub-answers, RL on the total).
"""
