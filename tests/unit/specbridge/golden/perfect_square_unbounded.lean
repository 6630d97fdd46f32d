-- isPerfectSquare: MiniSpec specification exported to Lean 4 (core only, no Mathlib)

@[reducible, simp]
def isPerfectSquare_precond (n : Nat) : Prop :=
  True

@[reducible, simp]
def isPerfectSquare_postcond (n : Nat) (result : Bool) (h_precond : isPerfectSquare_precond n) : Prop :=
  result = true ↔ (∃ k : Nat, k * k = n)
