"""neurips26.glue writes myst-nb's glue record: the value's text, hidden, under its name."""

import numpy as np
import pytest

from neurips26 import glue as glue_mod
from neurips26.glue import GLUE_PREFIX, glue, glue_all


@pytest.fixture
def shown(monkeypatch):
    calls = []

    def display(data, raw=False, metadata=None):
        calls.append((data, raw, metadata))

    monkeypatch.setattr("IPython.display.display", display)
    return calls


def test_a_glued_number_is_recorded_hidden_under_its_name(shown):
    glue("d9-tau-tree", np.float64(5.875))
    ((data, raw, metadata),) = shown
    assert raw is True and data == {GLUE_PREFIX + "text/plain": "5.875"}  # not "np.float64(5.875)"
    assert metadata == {"scrapbook": {"name": "d9-tau-tree", "mime_prefix": GLUE_PREFIX}}
    # myst-nb's own name for the hidden prefix, so its roles find the record
    from myst_nb.ext.glue import GLUE_PREFIX as MYST_PREFIX

    assert GLUE_PREFIX == MYST_PREFIX


def test_numbers_and_words_keep_a_text_form_myst_nb_can_format(shown):
    from myst_nb.core.variables import format_plain_text

    glue_all({"n": np.int64(9), "ok": True, "verdict": "partly", "lead": 0.523}, prefix="d8-")
    texts = {m["scrapbook"]["name"]: d[GLUE_PREFIX + "text/plain"] for d, _, m in shown}
    assert texts == {"d8-n": "9", "d8-ok": "True", "d8-verdict": "'partly'", "d8-lead": "0.523"}
    assert format_plain_text(texts["d8-lead"], "+.0%") == "+52%"
    assert format_plain_text(texts["d8-verdict"], "") == "partly"


def test_nan_is_glued_for_a_quantity_this_scale_does_not_measure(shown):
    from myst_nb.core.variables import format_plain_text

    glue("missing", float("nan"))
    ((data, _, _),) = shown
    assert format_plain_text(data[GLUE_PREFIX + "text/plain"], ".2f") == "nan"


def test_bad_names_and_values_are_refused(shown):
    with pytest.raises(ValueError, match="name"):
        glue("has space", 1.0)
    with pytest.raises(ValueError, match="finite"):
        glue("x", float("inf"))
    with pytest.raises(TypeError, match="value"):
        glue("x", [1, 2])
    with pytest.raises(TypeError, match="values"):
        glue_all([("x", 1)])
    assert shown == [] and glue_mod.GLUE_PREFIX.endswith("/")
