"""Start-up time of the ``bolt-pco64`` command line, as ratios.

Each command runs in fresh processes, side by side in one run with the two
references: ``python -c pass`` (the interpreter alone) and
``python -c "import botorch"`` (what a command that loads the BO stack pays
anyway). Times are the median wall time over ``--repeats`` runs, the commands
interleaved round by round so that load from other processes on a shared
machine hits all of them alike. The ``info`` command reads a small CSV table
written by this script (not the shipped stand-in, so that the figure is the
start-up, not the table's validation).

Usage::

    python benchmarks/cli_startup.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_CSV = """log2_dp_size,log2_tp_size,log2_pp_size,log2_cp_size,log2_sp_size,\
log2_dp_bucket_size_mb,zero_stage,log2_num_model_chunks,log2_grad_accum_steps,\
ran_successfully,throughput_mean,throughput_std,peak_mem_normalised,overall_time,\
all_time_steps,peak_mem,peak_mem_per_gpu
1,0,0,0,0,6,0,0,0,True,0.1,0.001,-0.5,100.0,"[1.0, 1.0]",48.0,"[48.0]"
2,1,1,0,1,7,3,1,0,False,,,0.5,,[],inf,[]
"""


def _time(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "tiny.csv"
        table.write_text(_CSV)
        py = [sys.executable]
        cli = [*py, "-m", "bolt_pco64"]
        commands = {
            "python -c pass": [*py, "-c", "pass"],
            'python -c "import botorch"': [*py, "-c", "import botorch"],
            "bolt-pco64 --help": [*cli, "--help"],
            "bolt-pco64 bench --help": [*cli, "bench", "--help"],
            "bolt-pco64 info --table tiny.csv": [*cli, "info", "--table", str(table)],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for cmd in commands.values():  # warm the file cache once
            _time(cmd, env)
        for _ in range(args.repeats):
            for name, cmd in commands.items():
                times[name].append(_time(cmd, env))
    med = {name: statistics.median(ts) for name, ts in times.items()}
    base = med["python -c pass"]
    botorch = med['python -c "import botorch"']
    print(
        f"# CLI start-up, median of {args.repeats} fresh processes "
        f"({platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f})"
    )
    print(
        f"{'command':<36} {'seconds':>8} {'x python -c pass':>17} {'x import botorch':>17}"
    )
    for name, t in med.items():
        print(f"{name:<36} {t:8.2f} {t / base:17.1f} {t / botorch:17.2f}")


if __name__ == "__main__":
    main()
