-- maxAbove: MiniSpec specification exported to Lean 4 (core only, no Mathlib)

@[reducible, simp]
def isUpperBound (a : Array Int) (x : Int) : Prop :=
  ∀ i : Nat, i < a.size → a[i]! ≤ x

@[reducible, simp]
def above (x : Int) (t : Int) : Bool :=
  x > t

@[reducible, simp]
def maxAbove_precond (a : Array Int) (t : Int) : Prop :=
  a.size > 0

@[reducible, simp]
def maxAbove_postcond (a : Array Int) (t : Int) (result : Int) (h_precond : maxAbove_precond a t) : Prop :=
  isUpperBound a result ∧ (∃ i : Nat, i < a.size ∧ a[i]! = result) ∧ (if above result t then (a.toList.filter (fun v => above v t)).length ≥ 1 else (a.toList.filter (fun v => above v t)).length = 0)
