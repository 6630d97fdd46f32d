"""SpecBridge (chapter 19): prose requirements to Lean specifications through a formalization plan."""
