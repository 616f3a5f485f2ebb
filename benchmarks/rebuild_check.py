"""Rebuild every shipped reconstruction and compare it with the shipped file.

The suite checks one instance (``tests/test_reconstruct.py``, pco32, the
fastest); this script checks all three, as ``bolt-pco64 generate --problem all
--from-traces shipped`` rebuilds them: every cell, NaN where NaN, bit for bit,
and the package's own parquet metadata (the footer's writing-library version is
not compared: it is not the reconstruction's).

Usage::

    python benchmarks/rebuild_check.py     # exit 1 on any difference
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from bolt_pco64.instances import INSTANCES
from bolt_pco64.tables.reconstruct.build import write_reconstructed_table

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, inst in sorted(INSTANCES.items()):
            t0 = time.perf_counter()
            shipped = ROOT / "data" / inst.reconstructed_filename
            out = write_reconstructed_table(Path(tmp) / shipped.name, name)
            a, b = pq.read_schema(out).metadata, pq.read_schema(shipped).metadata
            own = [{k: v for k, v in m.items() if k != b"pandas"} for m in (a, b)]
            frames = pd.read_parquet(out), pd.read_parquet(shipped)
            same = own[0] == own[1] and frames[0].equals(frames[1])
            print(
                f"{name}: {'same' if same else 'DIFFERENT'} "
                f"({time.perf_counter() - t0:.0f} s)"
            )
            if not same:
                failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
