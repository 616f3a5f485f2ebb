"""A built wheel carries the stand-in table and its fingerprint registry, and
finds them from any working directory."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from bolt_pco64.instances import INSTANCES

ROOT = Path(__file__).resolve().parent.parent

#: Run from the installed wheel, elsewhere: each instance's problem serves its
#: shipped stand-in (one warning per instance), recognised by content too.
CHECK = """
import sys, warnings, pathlib, bolt_pco64
import pandas as pd
from bolt_pco64 import ReconstructedTableWarning, SimulatedTableWarning, problem_class
from bolt_pco64.tables.locations import bundled_table_path
names = sys.argv[1:]
target = pathlib.Path(r"{target}")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    problems = [problem_class(name)() for name in names for _ in range(2)]
# the default is the shipped reconstruction (issue 27), one warning per instance
assert [type(w.message) for w in caught] == [ReconstructedTableWarning] * len(names), caught
assert pathlib.Path(bolt_pco64.__file__).is_relative_to(target)
for f in problems:
    assert f.table.source.kind == "reconstructed" and f.table.is_reconstructed
    assert pathlib.Path(f.table.source.path).is_relative_to(target)
    assert "reconstructed from published traces" in str(f.table.source)
# the stand-ins still ship and are labelled, also without the file's metadata or name
for name in names:
    path = bundled_table_path(name)
    assert path.is_relative_to(target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulatedTableWarning)
        f = problem_class(name)(table=path)
        g = problem_class(name)(table=pd.read_parquet(path))
    assert f.is_simulated
    assert g.is_simulated and g.table.source.kind == "dataframe"
    print(name, len(f.table), f.table.n_feasible)
"""


@pytest.mark.slow
def test_wheel_ships_and_serves_the_reconstruction_and_the_stand_in(
    tmp_path: Path,
) -> None:
    if not (ROOT / "data" / "pco64_simulated.parquet").is_file():
        pytest.fail("data/pco64_simulated.parquet is missing from the checkout")
    # every stand-in of the checkout must ship (pco16/pco32 once generated)
    shipped = [
        n for n in INSTANCES if (ROOT / "data" / f"{n}_simulated.parquet").is_file()
    ]
    dist = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(dist),
            str(ROOT),
        ],
        check=True,
    )
    (wheel,) = dist.glob("bolt_pco64-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    for name in shipped:
        assert f"bolt_pco64/data/{name}_simulated.parquet" in names
    assert "bolt_pco64/tables/standin_fingerprints.json" in names
    # the published traces with their licence notice, and the reconstructions
    assert "bolt_pco64/tables/reconstruction_fingerprints.json" in names
    assert "bolt_pco64/data/traces/LICENSE" in names
    assert "bolt_pco64/data/traces/README.md" in names
    for inst in INSTANCES.values():
        assert f"bolt_pco64/data/{inst.reconstructed_filename}" in names
        for trace in inst.trace_files:
            assert f"bolt_pco64/data/traces/{trace}" in names
        # every file an instance says it ships, stand-in variants included
        for relative in inst.shipped_files:
            assert f"bolt_pco64/data/{relative}" in names, relative
    # the lazily-exporting packages' stubs, which a type checker of the
    # installed copy reads (py.typed, PEP 561)
    assert "bolt_pco64/py.typed" in names
    stubs = sorted(
        p.relative_to(ROOT).as_posix() for p in ROOT.glob("bolt_pco64/**/*.pyi")
    )
    assert stubs
    assert not set(stubs) - set(names), set(stubs) - set(names)
    # a measured table installed in the checkout never ships
    measured = {f"bolt_pco64/data/{i.measured_filename}" for i in INSTANCES.values()}
    assert not measured & set(names)
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOLT_PCO64")}
    env["PYTHONPATH"] = str(target)
    env["BOLT_PCO64_HOME"] = str(tmp_path / "empty_home")
    out = subprocess.run(
        [sys.executable, "-c", CHECK.format(target=target), *shipped],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    served = [line.split() for line in out.stdout.splitlines()]
    assert [name for name, _, _ in served] == shipped
    for _, rows, feasible in served:
        assert 0 < int(feasible) <= int(rows)
