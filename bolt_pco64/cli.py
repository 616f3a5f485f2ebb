"""The ``bolt-pco64`` command line.

Every command reports a failure as one line on standard error and exits with
status 2.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import click

from bolt_pco64.table import (
    INPUT_COLUMNS,
    SimulatedTableWarning,
    TableError,
    decode_inputs,
    load_table,
)

__all__ = ["CLIError", "main"]


class CLIError(click.ClickException):
    """A one-line error that exits with status 2."""

    exit_code = 2


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="bolt_pco64")
def main() -> None:
    """pco64: LLM-training throughput on 64 GPUs by parallelism configuration,
    as a BoTorch test problem with out-of-memory crashes."""


@main.command()
@click.option(
    "--table",
    "table_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Inspect this table file (parquet or raw CSV) instead of the default.",
)
def info(table_path: Path | None) -> None:
    """Which table is in use, its size, bounds and best configuration."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SimulatedTableWarning)
            table = load_table(table_path)
    except (TableError, FileNotFoundError, OSError) as err:
        raise CLIError(" ".join(str(err).split())) from err
    best = table.best_row
    row = table.frame.iloc[best]
    raw = decode_inputs(table.X[best])
    bounds = table.bounds
    lines = [
        f"table:      {table.source}",
        f"rows:       {len(table)}",
        f"feasible:   {table.n_feasible} ({len(table) - table.n_feasible} ran out of memory)",
        "bounds (encoded inputs):",
        *(
            f"  {name:<24} {bounds[0, k].item():g} .. {bounds[1, k].item():g}"
            for k, name in enumerate(INPUT_COLUMNS)
        ),
        "best configuration:",
        "  " + ", ".join(f"{k}={v}" for k, v in raw.items()),
        f"  throughput_mean = {row['throughput_mean']:.5f}",
        f"  peak_mem        = {row['peak_mem']:.1f} GB",
    ]
    if table.is_simulated:
        lines.append("NOTE: these numbers are SIMULATED (stand-in), not measured.")
    click.echo("\n".join(lines))


@main.command()
@click.option(
    "--data-home",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Install here instead of BOLT_PCO64_HOME / the user data folder.",
)
@click.option("--force", is_flag=True, help="Download again even if installed.")
def fetch(data_home: Path | None, force: bool) -> None:
    """Download the measured table from the Hugging Face Hub (needs network).

    The download is validated before it is installed; a failed or invalid
    download changes nothing.
    """
    from bolt_pco64.fetch import FetchError, fetch_table

    try:
        path = fetch_table(data_home, force=force)
    except (FetchError, TableError, OSError) as err:
        raise CLIError(" ".join(str(err).split())) from err
    click.echo(f"measured table installed: {path}")


@main.command()
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Parquet file to write (atomically).",
)
@click.option("--seed", default=0, show_default=True, help="Seed of the noise.")
def generate(out: Path, seed: int) -> None:
    """Write the SIMULATED stand-in table (seed 0 reproduces the shipped file)."""
    from bolt_pco64.simulate import write_simulated_table

    try:
        path = write_simulated_table(out, seed=seed)
    except OSError as err:
        raise CLIError(f"Expected a writable path, got {out}: {err}") from err
    click.echo(str(path))


@main.command()
@click.option(
    "--methods",
    default=None,
    help="Comma-separated method names [default: random,qlognei,qlogei,ts,naive].",
)
@click.option(
    "--seeds", type=click.IntRange(min=1), default=None, help="Seeds per method [20]."
)
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=None,
    help="Evaluations per run, initial design included [60].",
)
@click.option(
    "--n-init",
    type=click.IntRange(min=1),
    default=None,
    help="Initial design size [10].",
)
@click.option(
    "--q", type=click.IntRange(min=1), default=1, show_default=True, help="Batch size."
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Output directory [bench-results/full, or bench-results/quick].",
)
@click.option(
    "--quick",
    is_flag=True,
    help="3 methods (random, qlognei, ts) x 3 seeds x 30 evaluations.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Local worker processes.",
)
@click.option(
    "--dask-scheduler", default=None, help="Address of a running Dask scheduler."
)
@click.option(
    "--table",
    "table_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Benchmark on this table file instead of the default.",
)
@click.option(
    "--noise",
    default=None,
    help="Observation noise: 'measured' or a standard deviation.",
)
@click.option("--no-progress", is_flag=True, help="No progress bars.")
def bench(
    methods: str | None,
    seeds: int | None,
    budget: int | None,
    n_init: int | None,
    q: int,
    out: Path | None,
    quick: bool,
    jobs: int,
    dask_scheduler: str | None,
    table_path: Path | None,
    noise: str | None,
    no_progress: bool,
) -> None:
    """Compare BO methods on pco64; resumable (see bolt_pco64.bench)."""
    from bolt_pco64.bench import run_benchmark_cli

    try:
        text = run_benchmark_cli(
            methods=methods,
            seeds=seeds,
            budget=budget,
            n_init=n_init,
            q=q,
            out=out,
            quick=quick,
            jobs=jobs,
            dask_scheduler=dask_scheduler,
            table=table_path,
            noise=noise,
            progress=not no_progress,
        )
    except (ValueError, TableError, FileNotFoundError, OSError) as err:
        raise CLIError(" ".join(str(err).split())) from err
    click.echo(text)
