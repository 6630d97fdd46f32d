"""Baselines of chapter 10: the EAGLE-3 drafter with its EAGLE-2 dynamic tree, and Medusa-style heads."""
