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
