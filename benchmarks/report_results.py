"""Rewrite every report under a result folder, the scripts' files included.

``bolt-pco64 report DIR`` rewrites what the package wrote (comparisons, the
family's and the variants' combined reports) with the package's code alone;
the files a script of this folder wrote (its folder's ``report.json`` names
it: ``{"script": "trace_check"}``) are rewritten by that script, which the
installed package never runs. This script does both: the package's
:func:`~bolt_pco64.bench.regenerate.regenerate`, then, for each folder
:func:`~bolt_pco64.bench.regenerate.script_folders` lists,
``python benchmarks/<script>.py --report FOLDER`` with this checkout's
package first on ``PYTHONPATH``. It prints the files written, one per line.

Run::

    python benchmarks/report_results.py docs/results
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from bolt_pco64.bench.regenerate import regenerate, script_folders

#: This checkout's ``benchmarks/`` folder, where the scripts are found.
BENCHMARKS = Path(__file__).resolve().parent


def run_script_report(folder: Path, script: str) -> list[Path]:
    """``python benchmarks/<script>.py --report folder``; the files it lists on
    standard output, one per line.

    Raises:
        ValueError: If the script is not in this checkout or fails (its last
            line of error output is said).
    """
    path = BENCHMARKS / f"{script}.py"
    if not path.is_file():
        raise ValueError(
            f"Expected benchmarks/{script}.py (named by "
            f"{str(folder / 'report.json')!r}), got no such file."
        )
    root = str(BENCHMARKS.parent)
    paths = [root, *filter(None, [os.environ.get("PYTHONPATH")])]
    done = subprocess.run(
        [sys.executable, str(path), "--report", str(folder)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)},
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise ValueError(
            f"Expected {path.name} --report {folder} to succeed, got: {last}"
        )
    return [Path(line) for line in done.stdout.splitlines() if line.strip()]


def regenerate_all(out: str | os.PathLike[str]) -> list[Path]:
    """Every file under ``out`` rewritten from its records: the package's
    reports, then each script folder's (see the module docstring)."""
    written = regenerate(out)
    for folder, script in script_folders(out):
        written += run_script_report(folder, script)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="A result folder.")
    args = parser.parse_args()
    for path in regenerate_all(args.folder):
        print(path)


if __name__ == "__main__":
    main()
