-- sortArray: MiniSpec specification exported to Lean 4 (core only, no Mathlib)

@[reducible, simp]
def sortArray_precond (a : Array Int) : Prop :=
  True

@[reducible, simp]
def sortArray_postcond (a : Array Int) (result : Array Int) (h_precond : sortArray_precond a) : Prop :=
  (∀ j : Nat, j < result.size → ∀ i : Nat, i < j → result[i]! ≤ result[j]!) ∧ List.Perm result.toList a.toList
