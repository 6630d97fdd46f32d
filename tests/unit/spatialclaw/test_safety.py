"""The AST safety check: forbidden imports, builtins, escapes and every way of rebinding a reserved name."""

from __future__ import annotations

import pytest

from neurips26.spatialclaw.safety import (
    FORBIDDEN_BUILTINS,
    FORBIDDEN_MODULES,
    RESERVED,
    UnsafeCodeError,
    check_code,
    is_reserved,
    is_safe,
)

GOOD_CELL = """
import numpy as np
import math
from scipy.spatial import cKDTree
import scipy.ndimage as ndi
import matplotlib.pyplot as plt

masks = tools.SAM3.segment_image_by_text(InputImages[0], "chair")
print(masks.num_objects, type(masks).__name__)
recon = tools.Reconstruct.Reconstruct(InputImages[0:4])
pts = recon.points[0][masks.get_mask(0, 0)]
conf = recon.points.confidence[0]
centre = np.median(pts, axis=0)
tree = cKDTree(pts)
d, i = tree.query(centre)
angles = [math.degrees(math.atan2(p[2], p[0])) for p in pts[:5]]
results = {}
results["chair"] = centre
def norm(v, *, axis=-1):
    return np.sqrt((v ** 2).sum(axis=axis))
with np.errstate(divide="ignore"):
    r = 1.0 / norm(pts)
try:
    q = ndi.label(masks.get_mask(0, 0))
except ValueError as err:
    print(f"failed: {err}")
plt.plot(r); plt.show()
show(masks.visualize(0))
ReturnAnswer(float(np.linalg.norm(centre)))
"""


def test_ordinary_numpy_scipy_matplotlib_code_passes():
    check_code(GOOD_CELL)
    assert is_safe(GOOD_CELL) == (True, "")


@pytest.mark.parametrize(
    "code",
    [
        "import os",
        "import os.path",
        "import os.path as p",
        "from subprocess import run",
        "from os.path import join",
        "import numpy, sys",
        "import torch",
        "from urllib.request import urlopen",
        "import builtins",
        "from builtins import open",
        "from numpy import *",
        "from . import x",
    ],
)
def test_forbidden_imports_are_rejected(code):
    ok, message = is_safe(code)
    assert not ok and "line 1" in message


@pytest.mark.parametrize("module", sorted(FORBIDDEN_MODULES))
def test_every_forbidden_module_in_every_import_form(module):
    for code in (
        f"import {module}",
        f"import {module}.x",
        f"from {module} import y",
        f"from {module}.x import y",
    ):
        with pytest.raises(UnsafeCodeError, match="forbidden import"):
            check_code(code)


@pytest.mark.parametrize("name", sorted(FORBIDDEN_BUILTINS))
def test_forbidden_builtins_called_or_named(name):
    with pytest.raises(UnsafeCodeError, match="forbidden builtin"):
        check_code(f"x = 1\ny = {name}('a')")
    with pytest.raises(UnsafeCodeError, match="line 1"):
        check_code(f"f = {name}")


@pytest.mark.parametrize(
    "code",
    [
        "__builtins__.open('f')",
        "__builtins__['eval']('1')",
        "builtins.open('f')",
        "x = ().__class__.__bases__[0].__subclasses__()",
        "g = f.__globals__",
        "d = getattr(np, '__dict__')",
        "globals()['tools'] = None",
        "get_ipython().system('ls')",
        "exit()",
    ],
)
def test_escapes_are_rejected(code):
    assert not is_safe(code)[0]


@pytest.mark.parametrize("code", ["scene = tools.SAM3._scene", "s = vlm\nprint(s._frames)", "m._masks[0]"])
def test_private_attributes_are_rejected(code):
    with pytest.raises(UnsafeCodeError, match="private attribute"):
        check_code(code)


def test_harmless_dunders_pass():
    check_code("print(type(x).__name__, np.__version__)\nif __name__ == '__main__':\n    pass")


BINDINGS = {
    "assignment": "{n} = 1",
    "tuple unpacking": "a, {n} = 1, 2",
    "starred": "a, *{n} = [1, 2, 3]",
    "nested unpacking": "[a, (b, {n})] = [1, (2, 3)]",
    "augmented": "{n} += 1",
    "annotated": "{n}: int = 1",
    "for target": "for {n} in range(3):\n    pass",
    "with-as": "with ctx() as {n}:\n    pass",
    "except-as": "try:\n    pass\nexcept ValueError as {n}:\n    pass",
    "walrus": "if ({n} := 3):\n    pass",
    "def": "def {n}():\n    pass",
    "async def": "async def {n}():\n    pass",
    "class": "class {n}:\n    pass",
    "import-as": "import numpy as {n}",
    "from-import-as": "from scipy import spatial as {n}",
    "parameter": "def f(a, {n}=1):\n    pass",
    "keyword-only parameter": "def f(*, {n}):\n    pass",
    "varargs": "def f(*{n}):\n    pass",
    "kwargs": "def f(**{n}):\n    pass",
    "lambda arg": "f = lambda {n}: 1",
    "list comprehension": "x = [1 for {n} in range(3)]",
    "generator": "x = sum(1 for {n} in range(3))",
    "dict comprehension": "x = {{k: 1 for k, {n} in y}}",
    "global": "def f():\n    global {n}\n    pass",
    "nonlocal": "def f():\n    x = 1\n    def g():\n        nonlocal {n}\n    return g",
    "del": "del {n}",
    "match capture": "match x:\n    case [1, {n}]:\n        pass",
    "item assignment": "{n}[0] = 1",
    "attribute assignment": "{n}.SAM3 = None",
}


@pytest.mark.parametrize("form", sorted(BINDINGS))
@pytest.mark.parametrize("name", [*RESERVED, "InputImages_2"])
def test_reserved_names_cannot_be_rebound_in_any_form(form, name):
    with pytest.raises(UnsafeCodeError, match=repr(name)) as info:
        check_code(BINDINGS[form].format(n=name))
    assert info.value.construct == "reserved name"


def test_ordinary_names_bind_freely_in_every_form():
    for form, template in BINDINGS.items():
        if form in ("nonlocal",):
            continue
        check_code(template.format(n="my_var"))


def test_reserved_pattern():
    assert is_reserved("InputImages_12") and is_reserved("tools")
    assert not is_reserved("InputImages_") and not is_reserved("InputImagesX") and not is_reserved("tool")


def test_message_names_line_and_construct_of_the_first_problem():
    with pytest.raises(UnsafeCodeError) as info:
        check_code("x = 1\n\nimport subprocess\ntools = 3")
    assert info.value.lineno == 3 and info.value.construct == "forbidden import"
    assert str(info.value).startswith("line 3: forbidden import") and "1 more" in str(info.value)


def test_syntax_errors_surface_as_syntax_errors():
    with pytest.raises(SyntaxError) as info:
        check_code("x = 1\ny = (")
    assert info.value.lineno is not None
    for magic in ("%reset -f", "!ls"):
        with pytest.raises(SyntaxError):
            is_safe(magic)


def test_bad_argument_type():
    with pytest.raises(TypeError, match="code"):
        check_code(b"import os")  # type: ignore[arg-type]


def test_unsafe_code_error_is_a_value_error():
    assert issubclass(UnsafeCodeError, ValueError)
