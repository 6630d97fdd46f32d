"""``python -m neurips26_book.verify [_build/html/claims.json]``: fail on any default verdict that changed.

``make book`` always builds the book and marks a default-scale verdict that differs from the committed one
(:mod:`neurips26_book.scoreboard`). This check is the other half: it reads the claims the build measured
(``claims.json``) and compares every default-scale verdict with the chapter's committed
``expected_claims.json``, read afresh from the package. It fails (exit 1) when a verdict differs, when a
default claim has no committed verdict, or when a committed claim was not measured at all; it prints
each claim's close calls too. ``make verify`` builds the book, then runs this.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from neurips26.claims import Claim, load_expected

DEFAULT_PATH = Path("_build/html/claims.json")


def problems(claims: Sequence[Claim]) -> list[str]:
    """What makes the verification fail: changed, uncommitted and unmeasured default-scale verdicts."""
    default = [c for c in claims if c.scale == "default"]
    if not default:
        return ["no default-scale claim was measured (was the book built at smoke scale?)"]
    out = []
    packages = sorted({c.package for c in default if c.package})
    expected = {package: load_expected(package) for package in packages}
    measured = {(c.package, c.id) for c in default}
    for c in default:
        committed = expected.get(c.package, {}).get(c.id)
        if committed is None:
            out.append(f"{c.chapter}/{c.id}: measured {c.verdict!r}, but no verdict is committed")
        elif committed != c.verdict:
            out.append(f"{c.chapter}/{c.id}: measured {c.verdict!r}, committed {committed!r}")
    for package, table in expected.items():
        for claim_id in table:
            if (package, claim_id) not in measured:
                out.append(f"neurips26.{package}/{claim_id}: committed but not measured by this build")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m neurips26_book.verify", description=__doc__)
    parser.add_argument("claims", nargs="?", default=str(DEFAULT_PATH), help="claims.json of a book build")
    args = parser.parse_args(argv)
    path = Path(args.claims)
    if not path.is_file():
        print(f"[verify] {path} does not exist: build the book first (make book)", file=sys.stderr)
        return 2
    claims = [Claim.from_dict(c) for c in json.loads(path.read_text(encoding="utf-8"))]
    for c in claims:
        if c.close_call:
            print(f"[verify] close call: {c.chapter}/{c.id} ({c.verdict})")
    found = problems(claims)
    for line in found:
        print(f"[verify] FAILED {line}", file=sys.stderr)
    default = sum(c.scale == "default" for c in claims)
    print(
        f"[verify] {default} default-scale claims checked against the committed verdicts: "
        f"{'all as committed' if not found else f'{len(found)} problem(s)'}"
    )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
