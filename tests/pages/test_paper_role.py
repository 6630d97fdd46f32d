"""The {paper} role marks a number typed from the paper: a dotted underline and a tooltip, text escaped."""

from neurips26_book.paper_role import PAPER_CLASS, TOOLTIP, paper_role


def test_the_paper_role_marks_and_escapes_its_number():
    (node,), messages = paper_role("paper", "{paper}`<8 %`", "<8 %", 1, None)
    assert messages == [] and node["format"] == "html"
    html = node.astext()
    assert f'class="{PAPER_CLASS}"' in html and f'title="{TOOLTIP}"' in html
    assert "&lt;8 %" in html and "<8 %" not in html
