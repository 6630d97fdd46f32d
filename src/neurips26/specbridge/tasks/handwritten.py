"""The hand-written MiniVerina tasks as Python data: prose, signature, reference pre/postcondition text,
reference code, test inputs and reject inputs.

Each entry is the keyword arguments of ``neurips26.specbridge.benchmark.build_task`` (without ``seed``);
expected outputs are computed from ``reference`` and unexpected ones by mutation when the task is built.
Several tasks are traps of the prose-to-Lean step: a difference of two counts or an absolute difference
(``Nat`` versus ``Int``), a clamp to ``Nat``, and existence statements over all integers that no test can
execute. Their order is fixed: even positions go to the pool, odd positions to the evaluation split.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any


def _true(**_: Any) -> bool:
    return True


def _nonempty(a: list[int], **_: Any) -> bool:
    return len(a) > 0


def _is_square(n: int) -> bool:
    return n >= 0 and math.isqrt(n) ** 2 == n


HANDWRITTEN: tuple[dict[str, Any], ...] = (
    dict(
        id="hw-find-max",
        description=(
            "Return the largest number in the array `a`. The array always holds at least one element; an "
            "empty array is not a valid input. Negative numbers are allowed. If the maximum occurs several "
            "times, it is still that single value that is returned."
        ),
        signature="def findMax (a : Array Int) : Int",
        helpers="def isUpperBound (a : Array Int) (m : Int) : Prop :=\n  ∀ i, i < a.size → a[i]! ≤ m",
        pre="a.size > 0",
        post="(∃ i, i < a.size ∧ a[i]! = result) ∧ isUpperBound a result",
        patterns=("max_characterisation", "nonempty_pre"),
        reference=lambda a: max(a),
        reference_pre=_nonempty,
        inputs=[
            {"a": [3]},
            {"a": [1, 5, 2]},
            {"a": [-4, -2, -9]},
            {"a": [7, 7, 1]},
            {"a": [0, -1, 8, 8, 3]},
            {"a": [-5]},
            {"a": [2, 9, 4, 9, -9, 6]},
        ],
        reject=[{"a": []}],
    ),
    dict(
        id="hw-arg-min",
        description=(
            "Given a non-empty array `a`, return the position of its smallest element, counting from 0. When "
            "the minimum occurs more than once, return the first position where it appears. Empty arrays are "
            "outside the contract."
        ),
        signature="def argMin (a : Array Int) : Nat",
        pre="a.size > 0",
        post=(
            "result < a.size ∧ (∀ i, i < a.size → a[result]! ≤ a[i]!) ∧ "
            "(∀ i, i < result → a[result]! < a[i]!)"
        ),
        patterns=("min_characterisation", "nonempty_pre", "index_in_range"),
        reference=lambda a: a.index(min(a)),
        reference_pre=_nonempty,
        inputs=[
            {"a": [4]},
            {"a": [3, 1, 2]},
            {"a": [5, -2, 7, -2]},
            {"a": [1, 1, 1]},
            {"a": [9, 8, 7, 6]},
            {"a": [-3, 0, -3, 4]},
            {"a": [2, 6, 0, 5, 0, 1]},
        ],
        reject=[{"a": []}],
    ),
    dict(
        id="hw-count-diff",
        description=(
            "Report how many more times the value `x` occurs in the array `a` than the value `y` does. The "
            "answer is negative when `y` is the more frequent one, and zero when both occur equally often or "
            "neither occurs. If `x` and `y` are equal the answer is 0."
        ),
        signature="def countDiff (a : Array Int) (x : Int) (y : Int) : Int",
        pre="True",
        post="result = (a.toList.count x : Int) - (a.toList.count y : Int)",
        patterns=("count_matches",),
        reference=lambda a, x, y: a.count(x) - a.count(y),
        reference_pre=_true,
        inputs=[
            {"a": [], "x": 1, "y": 2},
            {"a": [1, 1, 2], "x": 1, "y": 2},
            {"a": [1, 2, 2, 2], "x": 1, "y": 2},
            {"a": [5, 5], "x": 5, "y": 5},
            {"a": [3, -1, 3, -1, -1], "x": 3, "y": -1},
            {"a": [0, 4], "x": 7, "y": 4},
            {"a": [2, 2, 2], "x": 2, "y": 9},
        ],
        reject=[],
    ),
    dict(
        id="hw-sign-balance",
        description=(
            "Compute the number of strictly positive entries of `a` minus the number of strictly negative "
            "entries. Zeros count for neither side. The result can be negative, for example when the array "
            "holds only negative numbers, and it is 0 for an empty array."
        ),
        signature="def signBalance (a : Array Int) : Int",
        pre="True",
        post=(
            "result = ((a.toList.filter (fun x => x > 0)).length : Int) - "
            "((a.toList.filter (fun x => x < 0)).length : Int)"
        ),
        patterns=("count_matches",),
        reference=lambda a: sum(1 for v in a if v > 0) - sum(1 for v in a if v < 0),
        reference_pre=_true,
        inputs=[
            {"a": []},
            {"a": [1, 2, 3]},
            {"a": [-1, -2]},
            {"a": [0, 0, 5]},
            {"a": [-3, 4, -5, 0, -1]},
            {"a": [7, -7]},
            {"a": [0]},
        ],
        reject=[],
    ),
    dict(
        id="hw-is-perfect-square",
        description=(
            "Decide whether the integer `n` is a perfect square, that is, the square of some integer. State "
            "the property as the existence of such an integer without bounding it. Negative numbers are "
            "never "
            "squares; 0 and 1 are."
        ),
        signature="def isPerfectSquare (n : Int) : Bool",
        pre="True",
        post="result = true ↔ ∃ k : Int, k * k = n",
        patterns=("bool_iff", "unbounded_int_exists"),
        reference=lambda n: _is_square(n),
        reference_pre=_true,
        inputs=[{"n": 0}, {"n": 1}, {"n": 16}, {"n": 15}, {"n": -4}, {"n": 49}, {"n": 50}],
        reject=[],
    ),
    dict(
        id="hw-is-even",
        description=(
            "Return true when the integer `n` is even, meaning it equals twice some integer, and false "
            "otherwise. Negative even numbers such as -6 count as even, and so does 0. Express evenness by "
            "the "
            "existence of the halving integer."
        ),
        signature="def isEven (n : Int) : Bool",
        pre="True",
        post="result = true ↔ ∃ k : Int, n = 2 * k",
        patterns=("bool_iff", "unbounded_int_exists"),
        reference=lambda n: n % 2 == 0,
        reference_pre=_true,
        inputs=[{"n": 0}, {"n": 7}, {"n": -6}, {"n": -3}, {"n": 12}, {"n": 1}],
        reject=[],
    ),
    dict(
        id="hw-first-negative",
        description=(
            "Find the index of the first negative number in the array `a`, counting from 0. If the array "
            "contains no negative number, including when it is empty, return -1. Zero is not negative."
        ),
        signature="def firstNegative (a : Array Int) : Int",
        pre="True",
        post=(
            "(result = -1 → ∀ i, i < a.size → ¬ (a[i]! < 0)) ∧ "
            "(result ≠ -1 → 0 ≤ result ∧ result < (a.size : Int) ∧ a[result.toNat]! < 0 ∧ "
            "∀ j, j < result.toNat → ¬ (a[j]! < 0))"
        ),
        patterns=("first_index_or_sentinel",),
        reference=lambda a: next((i for i, v in enumerate(a) if v < 0), -1),
        reference_pre=_true,
        inputs=[
            {"a": []},
            {"a": [1, 2, 3]},
            {"a": [-1]},
            {"a": [4, 0, -2, -5]},
            {"a": [0, 0]},
            {"a": [3, 8, 1, -1]},
            {"a": [-7, -8]},
        ],
        reject=[],
    ),
    dict(
        id="hw-distances",
        description=(
            "For each element of `a`, compute how far it is from the target `t`, as a natural number: the "
            "absolute value of the difference. The output array is as long as the input, position by "
            "position. "
            "Elements below and above the target are both allowed; an empty array gives an empty array."
        ),
        signature="def distances (a : Array Int) (t : Int) : Array Nat",
        pre="True",
        post=(
            "result.size = a.size ∧ ∀ i, i < a.size → "
            "((result[i]! : Int) = a[i]! - t ∨ (result[i]! : Int) = t - a[i]!)"
        ),
        patterns=("pointwise_map",),
        reference=lambda a, t: [abs(v - t) for v in a],
        reference_pre=_true,
        inputs=[
            {"a": [], "t": 0},
            {"a": [1, 5], "t": 3},
            {"a": [-2, 2], "t": 0},
            {"a": [4, 4, 4], "t": 4},
            {"a": [-5, 7, 0], "t": -1},
            {"a": [10], "t": 12},
        ],
        reject=[],
    ),
    dict(
        id="hw-is-sorted",
        description=(
            "Check whether the array `a` is sorted in non-decreasing order. Equal neighbours are fine, so "
            "[1, 1, 2] is sorted. Arrays with zero or one element are sorted."
        ),
        signature="def isSorted (a : Array Int) : Bool",
        pre="True",
        post="result = true ↔ ∀ i j, i < j → j < a.size → a[i]! ≤ a[j]!",
        patterns=("bool_iff", "sortedness"),
        reference=lambda a: all(a[i] <= a[i + 1] for i in range(len(a) - 1)),
        reference_pre=_true,
        inputs=[
            {"a": []},
            {"a": [5]},
            {"a": [1, 1, 2]},
            {"a": [3, 2]},
            {"a": [-4, 0, 0, 9]},
            {"a": [1, 3, 2, 4]},
            {"a": [2, 2, 2, 1]},
        ],
        reject=[],
    ),
    dict(
        id="hw-sort-array",
        description=(
            "Return the elements of `a` sorted from smallest to largest. Every value must appear in the "
            "result "
            "exactly as often as in the input, so duplicates are kept. An empty array yields an empty array."
        ),
        signature="def sortArray (a : Array Int) : Array Int",
        pre="True",
        post="(∀ i j, i < j → j < result.size → result[i]! ≤ result[j]!) ∧ List.Perm result.toList a.toList",
        patterns=("sortedness", "permutation"),
        reference=lambda a: sorted(a),
        reference_pre=_true,
        inputs=[
            {"a": []},
            {"a": [2, 1]},
            {"a": [3, 3, 1]},
            {"a": [-1, 5, -7, 0]},
            {"a": [4]},
            {"a": [9, 8, 7, 6, 5]},
        ],
        reject=[],
    ),
    dict(
        id="hw-divides",
        description=(
            "Decide whether `d` divides `n`, that is, whether `n` equals `d` times some integer. Both "
            "numbers "
            "may be negative. By this definition 0 divides only 0, and every number divides 0."
        ),
        signature="def divides (d : Int) (n : Int) : Bool",
        pre="True",
        post="result = true ↔ ∃ k : Int, n = d * k",
        patterns=("bool_iff", "unbounded_int_exists"),
        reference=lambda d, n: n == 0 if d == 0 else n % d == 0,
        reference_pre=_true,
        inputs=[
            {"d": 3, "n": 12},
            {"d": 3, "n": 13},
            {"d": -2, "n": 8},
            {"d": 0, "n": 0},
            {"d": 0, "n": 5},
            {"d": 5, "n": 0},
            {"d": 4, "n": -6},
        ],
        reject=[],
    ),
    dict(
        id="hw-sum-divisible",
        description=(
            "Tell whether the sum of all elements of `a` is a multiple of the positive number `k`. The "
            "divisor `k` must be at least 1; a call with `k = 0` is invalid. The empty array sums to 0, "
            "which "
            "is a multiple of every `k`. Negative sums are allowed."
        ),
        signature="def sumDivisibleBy (a : Array Int) (k : Nat) : Bool",
        pre="k > 0",
        post="result = true ↔ ∃ q : Int, a.toList.sum = (k : Int) * q",
        patterns=("bool_iff", "unbounded_int_exists", "sum_equals"),
        reference=lambda a, k: sum(a) % k == 0,
        reference_pre=lambda a, k: k > 0,
        inputs=[
            {"a": [], "k": 3},
            {"a": [1, 2], "k": 3},
            {"a": [1, 1], "k": 3},
            {"a": [-4, -2], "k": 2},
            {"a": [5], "k": 1},
            {"a": [7, -3, 2], "k": 4},
            {"a": [-5], "k": 3},
        ],
        reject=[{"a": [], "k": 0}, {"a": [3, 6], "k": 0}],
    ),
    dict(
        id="hw-is-prime",
        description=(
            "Return whether the natural number `n` is prime: at least 2 and divisible by no number between 2 "
            "and `n - 1`. The numbers 0 and 1 are not prime."
        ),
        signature="def isPrime (n : Nat) : Bool",
        pre="True",
        post="result = true ↔ (2 ≤ n ∧ ∀ k, k < n → 2 ≤ k → n % k ≠ 0)",
        patterns=("bool_iff", "prime_like_universal"),
        reference=lambda n: n >= 2 and all(n % k for k in range(2, n)),
        reference_pre=_true,
        inputs=[{"n": 0}, {"n": 1}, {"n": 2}, {"n": 9}, {"n": 13}, {"n": 21}, {"n": 29}],
        reject=[],
    ),
    dict(
        id="hw-is-square-bounded",
        description=(
            "Decide whether the natural number `n` is a perfect square. Look for a root `k` no larger than "
            "`n` "
            "itself, so that the check is finite. 0 and 1 are squares."
        ),
        signature="def isSquare (n : Nat) : Bool",
        pre="True",
        post="result = true ↔ ∃ k, k < n + 1 ∧ k * k = n",
        patterns=("bool_iff", "bounded_exists_arith"),
        reference=lambda n: _is_square(n),
        reference_pre=_true,
        inputs=[{"n": 0}, {"n": 1}, {"n": 2}, {"n": 25}, {"n": 26}, {"n": 36}],
        reject=[],
    ),
    dict(
        id="hw-sum-first-k",
        description=(
            "Add up the first `k` elements of the array `a`. `k` may be 0, giving 0, and may equal the "
            "length "
            "of the array, giving the total. A `k` larger than the length is an invalid request."
        ),
        signature="def sumFirstK (a : Array Int) (k : Nat) : Int",
        pre="k ≤ a.size",
        post="result = (a.toList.take k).sum",
        patterns=("sum_equals", "prefix_take_drop", "index_in_range"),
        reference=lambda a, k: sum(a[:k]),
        reference_pre=lambda a, k: k <= len(a),
        inputs=[
            {"a": [], "k": 0},
            {"a": [1, 2, 3], "k": 2},
            {"a": [1, 2, 3], "k": 3},
            {"a": [4, -5], "k": 0},
            {"a": [-1, -2, 6], "k": 2},
            {"a": [9], "k": 1},
        ],
        reject=[{"a": [], "k": 1}, {"a": [1, 2], "k": 3}, {"a": [5], "k": 7}],
    ),
    dict(
        id="hw-count-in-range",
        description=(
            "Count how many values in `a` lie in the closed interval from `lo` to `hi`; both ends are "
            "included. Callers promise `lo ≤ hi`; an empty interval given backwards is invalid. Repeated "
            "values "
            "count each time."
        ),
        signature="def countInRange (a : Array Int) (lo : Int) (hi : Int) : Nat",
        pre="lo ≤ hi",
        post="result = (a.toList.filter (fun x => lo ≤ x ∧ x ≤ hi)).length",
        patterns=("count_matches",),
        reference=lambda a, lo, hi: sum(1 for v in a if lo <= v <= hi),
        reference_pre=lambda a, lo, hi: lo <= hi,
        inputs=[
            {"a": [], "lo": 0, "hi": 5},
            {"a": [1, 5, 6], "lo": 1, "hi": 5},
            {"a": [3, 3], "lo": 3, "hi": 3},
            {"a": [-2, 0, 2], "lo": -1, "hi": 1},
            {"a": [10, 20], "lo": 0, "hi": 5},
            {"a": [4, -4, 4, 7], "lo": -4, "hi": 4},
        ],
        reject=[{"a": [1], "lo": 2, "hi": 1}, {"a": [], "lo": 0, "hi": -1}, {"a": [3, 4], "lo": 5, "hi": -5}],
    ),
    dict(
        id="hw-count-vowels",
        description=(
            "Count the vowels in the string `s`. Only the lowercase letters a, e, i, o and u count; capital "
            "letters and y do not. The empty string has no vowels."
        ),
        signature="def countVowels (s : String) : Nat",
        pre="True",
        post=("result = (s.toList.filter (fun c => c = 'a' ∨ c = 'e' ∨ c = 'i' ∨ c = 'o' ∨ c = 'u')).length"),
        patterns=("count_matches",),
        reference=lambda s: sum(1 for c in s if c in "aeiou"),
        reference_pre=_true,
        inputs=[{"s": ""}, {"s": "banana"}, {"s": "rhythm"}, {"s": "AEIOU"}, {"s": "queue"}, {"s": "Lean4"}],
        reject=[],
    ),
    dict(
        id="hw-is-anagram",
        description=(
            "Decide whether the strings `s` and `t` are anagrams: the same characters, each the same number "
            "of "
            "times, in any order. The comparison is case-sensitive and spaces count as characters. Two empty "
            "strings are anagrams."
        ),
        signature="def isAnagram (s : String) (t : String) : Bool",
        pre="True",
        post="result = true ↔ List.Perm s.toList t.toList",
        patterns=("bool_iff", "permutation"),
        reference=lambda s, t: Counter(s) == Counter(t),
        reference_pre=_true,
        inputs=[
            {"s": "", "t": ""},
            {"s": "listen", "t": "silent"},
            {"s": "aab", "t": "abb"},
            {"s": "Ab", "t": "ab"},
            {"s": "a b", "t": "ba "},
            {"s": "abc", "t": "abcd"},
        ],
        reject=[],
    ),
    dict(
        id="hw-tail-sum",
        description=(
            "Given a list `l` and a position `k`, return the sum of the elements from position `k` to the "
            "end "
            "(positions counted from 0). `k` may equal the length, in which case nothing is left and the sum "
            "is 0; a larger `k` is not allowed."
        ),
        signature="def tailSum (l : List Int) (k : Nat) : Int",
        pre="k ≤ l.length",
        post="result = (l.drop k).sum",
        patterns=("sum_equals", "prefix_take_drop", "index_in_range"),
        reference=lambda l, k: sum(l[k:]),
        reference_pre=lambda l, k: k <= len(l),
        inputs=[
            {"l": [], "k": 0},
            {"l": [1, 2, 3], "k": 1},
            {"l": [1, 2, 3], "k": 3},
            {"l": [-4, 4, 5], "k": 0},
            {"l": [7, -2, -2], "k": 2},
            {"l": [6], "k": 1},
        ],
        reject=[{"l": [], "k": 1}, {"l": [1, 2], "k": 4}],
    ),
    dict(
        id="hw-balanced-at",
        description=(
            "Say whether cutting the list `l` after its first `k` elements leaves two parts with equal sums. "
            "Either part may be empty, and an empty part sums to 0. The cut position `k` never exceeds the "
            "length of the list; such calls are invalid."
        ),
        signature="def balancedAt (l : List Int) (k : Nat) : Bool",
        pre="k ≤ l.length",
        post="result = true ↔ (l.take k).sum = (l.drop k).sum",
        patterns=("bool_iff", "prefix_take_drop", "sum_equals"),
        reference=lambda l, k: sum(l[:k]) == sum(l[k:]),
        reference_pre=lambda l, k: k <= len(l),
        inputs=[
            {"l": [], "k": 0},
            {"l": [1, 2, 3], "k": 2},
            {"l": [3, 1, 2], "k": 1},
            {"l": [0, 0], "k": 0},
            {"l": [5, -5], "k": 2},
            {"l": [4, 4], "k": 1},
            {"l": [1, 2], "k": 1},
        ],
        reject=[{"l": [], "k": 2}, {"l": [1], "k": 2}, {"l": [1, 2, 3], "k": 9}],
    ),
    dict(
        id="hw-contains",
        description=(
            "Return true if the value `x` occurs somewhere in the array `a`, and false otherwise. An empty "
            "array contains nothing. Occurring more than once is still just true."
        ),
        signature="def contains (a : Array Int) (x : Int) : Bool",
        pre="True",
        post="result = true ↔ ∃ i, i < a.size ∧ a[i]! = x",
        patterns=("bool_iff", "exists_satisfy"),
        reference=lambda a, x: x in a,
        reference_pre=_true,
        inputs=[
            {"a": [], "x": 0},
            {"a": [1, 2], "x": 2},
            {"a": [1, 2], "x": 3},
            {"a": [-1, -1], "x": -1},
            {"a": [0], "x": 0},
            {"a": [4, 5, 6], "x": -4},
        ],
        reject=[],
    ),
    dict(
        id="hw-clamp-nonneg",
        description=(
            "Turn every element of the integer array `a` into a natural number by replacing negative values "
            "with 0 and keeping the others. The output has one entry per input entry, in the same order; an "
            "empty array stays empty."
        ),
        signature="def clampNonneg (a : Array Int) : Array Nat",
        pre="True",
        post="result.size = a.size ∧ ∀ i, i < a.size → result[i]! = (a[i]!).toNat",
        patterns=("pointwise_map",),
        reference=lambda a: [max(v, 0) for v in a],
        reference_pre=_true,
        inputs=[
            {"a": []},
            {"a": [1, -1]},
            {"a": [-3, -4]},
            {"a": [0, 5, -2]},
            {"a": [7]},
            {"a": [2, -9, 3, 0]},
        ],
        reject=[],
    ),
    dict(
        id="hw-spread",
        description=(
            "Return the spread of the non-empty array `a`: its largest element minus its smallest, which is "
            "never negative and is returned as a natural number. An array whose elements are all equal has "
            "spread 0. Empty arrays are not allowed."
        ),
        signature="def spread (a : Array Int) : Nat",
        pre="a.size > 0",
        post=(
            "(∃ i, i < a.size ∧ ∃ j, j < a.size ∧ (result : Int) = a[i]! - a[j]!) ∧ "
            "(∀ i, i < a.size → ∀ j, j < a.size → a[i]! - a[j]! ≤ (result : Int))"
        ),
        patterns=("max_characterisation", "nonempty_pre"),
        reference=lambda a: max(a) - min(a),
        reference_pre=_nonempty,
        inputs=[
            {"a": [5]},
            {"a": [1, 4]},
            {"a": [-3, 3]},
            {"a": [2, 2, 2]},
            {"a": [-8, -1, -5]},
            {"a": [0, 9, -9, 4]},
        ],
        reject=[{"a": []}],
    ),
    dict(
        id="hw-max-of-prefix",
        description=(
            "Return the largest of the first `k` elements of `a`. `k` must be at least 1 and at most the "
            "length of the array; any other `k` is an invalid call. Later elements are ignored even if they "
            "are larger."
        ),
        signature="def maxOfPrefix (a : Array Int) (k : Nat) : Int",
        pre="0 < k ∧ k ≤ a.size",
        post="(∃ i, i < k ∧ a[i]! = result) ∧ (∀ i, i < k → a[i]! ≤ result)",
        patterns=("max_characterisation", "index_in_range"),
        reference=lambda a, k: max(a[:k]),
        reference_pre=lambda a, k: 0 < k <= len(a),
        inputs=[
            {"a": [3], "k": 1},
            {"a": [1, 9, 2], "k": 1},
            {"a": [1, 9, 2], "k": 2},
            {"a": [-5, -2, -7], "k": 3},
            {"a": [4, 4, 8], "k": 2},
            {"a": [0, -1, 6, 2], "k": 4},
        ],
        reject=[{"a": [1, 2], "k": 0}, {"a": [1, 2], "k": 3}, {"a": [], "k": 0}],
    ),
)

__all__ = ["HANDWRITTEN"]
