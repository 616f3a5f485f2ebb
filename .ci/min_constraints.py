"""Pin every dependency at the lower bound that ``pyproject.toml`` declares.

Writes a pip constraints file (``name==version`` lines) for the oldest-allowed CI
run: each requirement of ``[project].dependencies`` and of the extras named with
``--extras`` becomes ``name==X`` for its ``>=X`` (or ``==X``, ``~=X``) bound. A
requirement's own extras (``dask[distributed]``) are left to pip's resolver,
which then takes the releases that match the pinned one. ``--only-extras``
leaves the core dependencies out, for an extra whose oldest release needs a
newer core than the core's own lower bounds (``ax-platform`` pins BoTorch);
``--skip`` leaves named distributions out (CI keeps the CPU build of torch that
it installed first).

Usage::

    python .ci/min_constraints.py [--extras dask,optuna] [--only-extras] \
        [--skip torch] [--pyproject pyproject.toml] > constraints.txt
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

#: This package's name (its extras may name its other extras).
PACKAGE = "bolt_pco64"

#: Operators whose version is the oldest release the requirement admits.
LOWER_BOUND_OPERATORS = (">=", "==", "~=")


class ConstraintsError(ValueError):
    """A requirement that gives no lower bound to pin."""


def lower_bound(req: Requirement) -> Version:
    """The oldest version ``req`` admits (its ``>=``, ``==`` or ``~=`` bound).

    Raises:
        ConstraintsError: If ``req`` states no such bound, or states two.
    """
    bounds = [
        Version(s.version) for s in req.specifier if s.operator in LOWER_BOUND_OPERATORS
    ]
    if len(bounds) != 1:
        raise ConstraintsError(
            f"Expected exactly one lower bound (>=, == or ~=) in {str(req)!r}, "
            f"got {len(bounds)}."
        )
    return bounds[0]


def requirements(
    pyproject: dict, extras: Iterable[str] = (), core: bool = True
) -> list[Requirement]:
    """The requirements of the core (if ``core``) and of ``extras``.

    Requirements whose environment marker does not hold here are left out.

    Raises:
        ConstraintsError: If an extra is not declared.
    """
    project = pyproject["project"]
    declared = project.get("optional-dependencies", {})
    lines = list(project.get("dependencies", [])) if core else []
    for extra in extras:
        if extra not in declared:
            raise ConstraintsError(
                f"Expected an extra declared in pyproject.toml "
                f"({', '.join(sorted(declared))}), got {extra!r}."
            )
        lines.extend(declared[extra])
    reqs = [Requirement(line) for line in lines]
    return [r for r in reqs if r.marker is None or r.marker.evaluate()]


def constraints(reqs: Iterable[Requirement], skip: Iterable[str] = ()) -> list[str]:
    """``name==version`` lines by normalized name; a repeated name's highest bound.

    The package itself (an extra that names other extras) and the names in
    ``skip`` are left out.
    """
    left_out = {canonicalize_name(n) for n in [PACKAGE, *skip]}
    pins: dict[str, Version] = {}
    for req in reqs:
        key = canonicalize_name(req.name)
        if key in left_out:
            continue
        version = lower_bound(req)
        if key not in pins or version > pins[key]:
            pins[key] = version
    return [f"{name}=={version}" for name, version in sorted(pins.items())]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyproject", type=Path, default=Path("pyproject.toml"))
    parser.add_argument(
        "--extras", default="", help="comma-separated extras to pin as well"
    )
    parser.add_argument("--only-extras", action="store_true", help="leave the core out")
    parser.add_argument(
        "--skip", default="", help="comma-separated distributions to leave out"
    )
    args = parser.parse_args(argv)
    with args.pyproject.open("rb") as f:
        pyproject = tomllib.load(f)
    extras = [e.strip() for e in args.extras.split(",") if e.strip()]
    skip = [e.strip() for e in args.skip.split(",") if e.strip()]
    try:
        reqs = requirements(pyproject, extras, core=not args.only_extras)
        lines = constraints(reqs, skip)
    except ConstraintsError as err:
        print(f"{args.pyproject}: {err}", file=sys.stderr)
        return 2
    sys.stdout.write("".join(f"{line}\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
