"""MiniSpec's syntax tree: types validate, nodes are hashable values, conjuncts and conjoin invert."""

import pytest

from neurips26.specbridge.minispec.ast import (
    FALSE,
    INT,
    TRUE,
    Binary,
    Lit,
    Quant,
    Ty,
    Var,
    conjoin,
    conjuncts,
)


def test_types_validate_and_print_as_lean():
    assert str(Ty("Array", "Int")) == "Array Int" and str(INT) == "Int"
    assert Ty("List", "Char").is_container and not INT.is_container
    with pytest.raises(ValueError, match="element"):
        Ty("Array", "Bool")
    with pytest.raises(ValueError, match="no element"):
        Ty("Int", "Int")
    with pytest.raises(ValueError, match="type name"):
        Ty("Real")


def test_nodes_are_values():
    a = Binary("<", Var("i"), Lit(3))
    assert a == Binary("<", Var("i"), Lit(3)) and hash(a) == hash(Binary("<", Var("i"), Lit(3)))
    q = Quant("∀", "i", Ty("Nat"), Lit(3), a)
    assert q.bounded and not Quant("∃", "x", INT, None, a).bounded


def test_conjuncts_and_conjoin_invert():
    parts = (Var("p"), Var("q"), Var("r"))
    nested = conjoin(parts)
    assert nested == Binary("∧", Var("p"), Binary("∧", Var("q"), Var("r")))
    assert conjuncts(nested) == parts
    assert conjuncts(Binary("∧", Binary("∧", Var("p"), Var("q")), Var("r"))) == parts
    assert conjoin(()) == TRUE and conjuncts(TRUE) == ()
    assert conjuncts(FALSE) == (FALSE,)


def test_literals_of_different_kinds_differ():
    assert Lit(True) != Lit(1) and Lit(False) != Lit(0)
    assert hash(Lit(True)) != hash(Lit(1)) or Lit(True) != Lit(1)
    assert Lit(3) == Lit(3) and Lit("a") != Lit(1)
    with pytest.raises(TypeError, match="value"):
        Lit(1.5)
