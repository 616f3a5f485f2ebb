"""Rebuild every shipped reconstruction and compare it with the shipped file.

The suite checks one instance (``tests/test_reconstruct.py``, pco32, the
fastest); this script checks all three, as ``bolt-pco64 generate --problem all
--from-traces shipped`` rebuilds them.

What must hold on any machine (:func:`differences`):

- the grid, each row's source, whether it ran, its observation count and its
  grid rule, and every cell of the rows the traces measured (``source`` not
  ``imputed``): equal, NaN where NaN;
- the package's own parquet metadata, less the two fitted figures that are
  computed, not copied (``calibration``, ``prediction_set``; the footer's
  writing-library version is not the reconstruction's either);
- on imputed rows, values computed along another machine's floating-point
  path: each throughput within a tenth of its stated standard error
  (:data:`SE_SHARE`), the standard error within 5 % (:data:`RELATIVE_SE`), the peak memory
  within 1 % (:data:`RELATIVE`), the probability of running within 0.01 (:data:`PROBABILITY`).

On the machine that built the shipped files the rebuild is bit for bit
(``--exact`` checks that); across machines it is not, and the standards do not
ask it to be (measured on an AMD EPYC against the shipped files, the largest moves: an
imputed throughput by 0.064 of its standard error (pco16), a standard error
by 2.3 % (pco16), peak memory by 0.33 % (pco32), a probability of running by
0.0017 (pco64); the script prints each column's largest move as a share of
its tolerance).

Usage::

    python benchmarks/rebuild_check.py            # exit 1 on any difference
    python benchmarks/rebuild_check.py --exact    # bit for bit (the building machine)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from bolt_pco64.instances import INSTANCES
from bolt_pco64.tables.reconstruct.build import write_reconstructed_table

ROOT = Path(__file__).resolve().parents[1]

#: Columns that describe a row rather than measure it: equal on every row.
STRUCTURE = ("source", "ran_successfully", "n_observations", "inferred", "grid_rule")
#: Metadata keys holding fitted figures (computed, so machine-dependent).
FITTED_METADATA = (b"calibration", b"prediction_set", b"pandas")
#: An imputed throughput may move by this share of its standard error.
SE_SHARE = 0.1
#: Relative tolerance of an imputed row's peak memory.
RELATIVE = 0.01
#: Relative tolerance of an imputed row's standard error (itself an estimate,
#: whose own sampling error is far larger).
RELATIVE_SE = 0.05
#: Absolute tolerance of an imputed row's probability of running.
PROBABILITY = 0.01


def _metadata(path: Path) -> dict[bytes, bytes]:
    meta = pq.read_schema(path).metadata or {}
    return {k: v for k, v in meta.items() if k not in FITTED_METADATA}


def differences(rebuilt: Path, shipped: Path, exact: bool = False) -> list[str]:
    """What separates a rebuilt reconstruction from the shipped one, one line
    each (empty: they agree). ``exact`` asks for every cell bit for bit and
    the whole metadata (the machine that built ``shipped``)."""
    a, b = pd.read_parquet(rebuilt), pd.read_parquet(shipped)
    if exact:
        meta = [
            {
                k: v
                for k, v in (pq.read_schema(p).metadata or {}).items()
                if k != b"pandas"
            }
            for p in (rebuilt, shipped)
        ]
        out = [] if meta[0] == meta[1] else ["metadata differs"]
        return out + ([] if a.equals(b) else ["cells differ"])
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return [
            f"Expected columns {list(b.columns)} x {len(b)} rows, got {list(a.columns)} x {len(a)}"
        ]
    out = []
    ma, mb = _metadata(rebuilt), _metadata(shipped)
    out += [
        f"metadata {k.decode()!r} differs"
        for k in sorted({*ma, *mb})
        if ma.get(k) != mb.get(k)
    ]
    measured = (b["source"] != "imputed").to_numpy()
    keys = [c for c in b.columns if c.startswith("log2_") or c == "zero_stage"]
    for column in (*keys, *STRUCTURE):
        if not a[column].equals(b[column]):
            out.append(
                f"column {column!r} differs on {int((a[column] != b[column]).sum())} rows"
            )
    if not a[measured].equals(b[measured]):
        out.append("a measured row's cells differ")
    imp = ~measured
    for name, share in tolerance_shares(a, b, imp).items():
        bad = int((share > 1).sum())
        if bad:
            out.append(
                f"{bad} imputed rows' {name} beyond tolerance "
                f"(largest move {np.nanmax(share):.2f} of it)"
            )
    return out


def tolerance_shares(
    a: pd.DataFrame, b: pd.DataFrame, imputed: np.ndarray
) -> dict[str, np.ndarray]:
    """Each imputed row's move from ``b`` (shipped) to ``a`` (rebuilt) as a
    share of its tolerance, per checked column (``> 1``: beyond; ``inf``: a
    value that is NaN or infinite on one side only; ``0`` where equal, an
    out-of-memory row's infinite peak memory included)."""

    def col(frame: pd.DataFrame, name: str) -> np.ndarray:
        return frame.loc[imputed, name].to_numpy(dtype=float)

    def share(name: str, limit: np.ndarray) -> np.ndarray:
        x, y = col(a, name), col(b, name)
        with np.errstate(invalid="ignore", divide="ignore"):
            moved = np.where(x == y, 0.0, np.abs(x - y) / limit)
        both_nan = np.isnan(x) & np.isnan(y)
        return np.where(both_nan, 0.0, np.where(np.isnan(moved), np.inf, moved))

    return {
        "throughput_mean": share("throughput_mean", SE_SHARE * col(b, "throughput_se")),
        "throughput_se": share("throughput_se", RELATIVE_SE * col(b, "throughput_se")),
        "peak_mem": share("peak_mem", RELATIVE * col(b, "peak_mem")),
        "feasible_probability": share(
            "feasible_probability", np.full(int(imputed.sum()), PROBABILITY)
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exact", action="store_true", help="bit for bit")
    args = parser.parse_args(argv)
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, inst in sorted(INSTANCES.items()):
            t0 = time.perf_counter()
            shipped = ROOT / "data" / inst.reconstructed_filename
            out = write_reconstructed_table(Path(tmp) / shipped.name, name)
            found = differences(out, shipped, exact=args.exact)
            verdict = "agrees" if not found else "DIFFERENT: " + "; ".join(found)
            print(f"{name}: {verdict} ({time.perf_counter() - t0:.0f} s)")
            a, b = pd.read_parquet(out), pd.read_parquet(shipped)
            shares = tolerance_shares(a, b, (b["source"] == "imputed").to_numpy())
            print(
                "  largest move as a share of its tolerance: "
                + ", ".join(
                    f"{k} {np.max(v, initial=0.0):.3f}" for k, v in shares.items()
                )
            )
            if found:
                failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
