import numpy as np
import pytest

from neurips26.validation import (
    check_array,
    check_choice,
    check_float,
    check_float_tuple,
    check_int,
    check_int_tuple,
    check_seed,
    check_tuple,
)


def test_check_int_accepts_numpy_ints_and_rejects_bools():
    assert check_int("n", np.int64(3), minimum=0) == 3
    with pytest.raises(TypeError, match="n must be an int"):
        check_int("n", True)
    with pytest.raises(TypeError, match="n must be an int"):
        check_int("n", 3.0)


def test_check_int_range_names_argument():
    with pytest.raises(ValueError, match="s_h must be >= 0; got -1"):
        check_int("s_h", -1, minimum=0)
    with pytest.raises(ValueError, match="s_h must be <= 4"):
        check_int("s_h", 5, maximum=4)


def test_check_float():
    assert check_float("eta", 1, minimum=0.0) == 1.0
    with pytest.raises(ValueError, match="eta must be > 0"):
        check_float("eta", 0.0, minimum=0.0, strict_min=True)
    with pytest.raises(ValueError, match="eta must be finite"):
        check_float("eta", float("nan"))
    with pytest.raises(TypeError, match="eta"):
        check_float("eta", "1")


def test_check_choice():
    assert check_choice("threshold", "hard", ("hard", "soft")) == "hard"
    with pytest.raises(ValueError, match="threshold must be one of"):
        check_choice("threshold", "medium", ("hard", "soft"))
    with pytest.raises(TypeError, match="threshold"):
        check_choice("threshold", 1, ("hard", "soft"))


def test_check_array_shape_dtype_finiteness():
    x = np.zeros((3, 4))
    assert check_array("x", x, shape=(3, None)) is x
    with pytest.raises(ValueError, match=r"x must have shape \(3, 5\)"):
        check_array("x", x, shape=(3, 5))
    with pytest.raises(ValueError, match="x must be 1-dimensional"):
        check_array("x", x, ndim=1)
    with pytest.raises(TypeError, match="x must be a numpy.ndarray"):
        check_array("x", [1, 2])
    with pytest.raises(TypeError, match="x must hold real numbers"):
        check_array("x", np.zeros(2, complex), complex_ok=False)
    with pytest.raises(ValueError, match="x must contain only finite values"):
        check_array("x", np.array([1.0, np.nan]))
    with pytest.raises(TypeError, match="x must hold"):
        check_array("x", np.array(["a"]))


def test_check_seed():
    assert check_seed("seed", 0) == 0
    with pytest.raises(ValueError, match="seed"):
        check_seed("seed", -1)


def test_check_tuple_grids():
    assert check_int_tuple("ns", (4, 8, 16), minimum=4) == (4, 8, 16)
    assert check_float_tuple("cs", (0.5, 1), minimum=0.0, strict_min=True) == (0.5, 1.0)
    with pytest.raises(TypeError, match="ns must be a tuple"):
        check_int_tuple("ns", [4, 8])
    with pytest.raises(ValueError, match="ns must have at least 1"):
        check_int_tuple("ns", ())
    with pytest.raises(ValueError, match=r"ns\[1\] must be >= 4"):
        check_int_tuple("ns", (4, 3), minimum=4)
    with pytest.raises(TypeError, match=r"ns\[0\] must be an int"):
        check_int_tuple("ns", (4.0,))
    with pytest.raises(ValueError, match="ns must be strictly increasing"):
        check_int_tuple("ns", (8, 4))
    with pytest.raises(ValueError, match=r"cs\[0\] must be > 0.0"):
        check_float_tuple("cs", (0.0, 1.0), minimum=0.0, strict_min=True)
    # "distinct" allows any order but no repeats; "any" allows both
    assert check_int_tuple("slots", (3, 1), minimum=1, order="distinct") == (3, 1)
    with pytest.raises(ValueError, match="slots must not repeat"):
        check_int_tuple("slots", (1, 1), minimum=1, order="distinct")
    assert check_int_tuple("slots", (1, 1), order="any") == (1, 1)
    with pytest.raises(ValueError, match="order must be one of"):
        check_int_tuple("slots", (1,), order="sorted")  # type: ignore[arg-type]


def test_check_tuple_custom_item_and_length():
    def even(name: str, value: object) -> int:
        value = check_int(name, value)
        if value % 2:
            raise ValueError(f"{name} must be even; got {value}")
        return value

    assert check_tuple("sizes", (2, 4), even, min_len=2) == (2, 4)
    with pytest.raises(ValueError, match="sizes must have at least 2"):
        check_tuple("sizes", (2,), even, min_len=2)
    with pytest.raises(ValueError, match=r"sizes\[1\] must be even"):
        check_tuple("sizes", (2, 3), even)


def test_check_instances_returns_a_tuple_and_names_the_argument_or_item():
    from neurips26.validation import check_instances

    assert check_instances("xs", [1, 2], int) == (1, 2)
    assert check_instances("xs", (), int) == ()
    with pytest.raises(TypeError, match="xs must be a sequence of int"):
        check_instances("xs", 3, int)
    with pytest.raises(TypeError, match="xs must be a sequence of str"):
        check_instances("xs", "abc", str)
    with pytest.raises(TypeError, match=r"xs\[1\] must be a int"):
        check_instances("xs", [1, "2"], int)
