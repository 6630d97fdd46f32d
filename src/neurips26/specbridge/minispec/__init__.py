"""MiniSpec: the Lean 4 fragment of chapter 19's specifications (syntax, parser, printer, Lean export)."""
