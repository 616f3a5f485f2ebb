"""The table commands: ``info``, ``fetch`` and ``generate``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from bolt_pco64.cli._core import (
    _TABLE_TYPE,
    CLIError,
    _load,
    _one_line,
    _problem_option,
    main,
)
from bolt_pco64.cli.params import _InstanceFile
from bolt_pco64.instances import Instance

__all__ = ["fetch", "generate", "info"]


def _published_check(table: Any) -> list[tuple[str, str, str, bool]]:
    """``(figure, published, this table, equal)`` for each published figure.

    Values are compared as published: the best value to 5 decimals (as the
    pco64 card gives it), peaks to 0.1 GB.
    """
    inst: Instance = table.instance
    pub = inst.published
    if pub is None:
        return []
    frame = table.frame
    feasible = frame["ran_successfully"].to_numpy(dtype=bool)
    best = table.best_row
    best_config = tuple(int(v) for v in table.X[best].tolist())
    checks = [
        ("rows", f"{pub.rows}", f"{len(table)}"),
        ("feasible", f"{pub.feasible}", f"{table.n_feasible}"),
        (
            "best throughput_mean",
            f"{pub.best_value:.5f}",
            f"{frame['throughput_mean'].iloc[best]:.5f}",
        ),
        (
            "best configuration (encoded)",
            ",".join(map(str, pub.best_config)),
            ",".join(map(str, best_config)),
        ),
    ]
    if pub.best_peak_mem_gb is not None:
        checks.append(
            (
                "best peak_mem (GB)",
                f"{pub.best_peak_mem_gb:.1f}",
                f"{frame['peak_mem'].iloc[best]:.1f}",
            )
        )
    if pub.max_feasible_peak_gb is not None:
        checks.append(
            (
                "largest feasible peak_mem (GB)",
                f"{pub.max_feasible_peak_gb:.1f}",
                f"{frame['peak_mem'].to_numpy()[feasible].max():.1f}",
            )
        )
    return [(name, want, got, want == got) for name, want, got in checks]


@main.command(
    short_help="Show the table in use and check it against the published figures."
)
@_problem_option()
@click.option(
    "--table",
    "table_path",
    type=_TABLE_TYPE,
    default=None,
    help="Inspect this table file (parquet or raw CSV) instead of the default.",
)
@click.option(
    "--instance",
    "instance",
    type=_InstanceFile(),
    default=None,
    help="A user's own instance described in this TOML file "
    "(bolt_pco64.instance_file), instead of --problem; with --table.",
)
def info(problem: str, table_path: Path | None, instance: Instance | None) -> None:
    """Which table is in use, its size, bounds and best configuration, and
    whether it meets the figures published about the measured table."""
    from bolt_pco64.tables.table import decode_inputs

    table = _load(table_path, problem if instance is None else instance)
    instance = table.instance
    best = table.best_row
    row = table.frame.iloc[best]
    raw = decode_inputs(table.X[best], instance=instance)
    bounds = table.bounds
    checks = _published_check(table)
    missed = [name for name, _, _, ok in checks if not ok]
    what = "the stand-in" if table.is_simulated else "this table"
    lines = [
        f"problem:    {instance.name} ({instance.num_gpus} GPUs on "
        f"{instance.num_hosts} hosts, {instance.gpu_memory_gb:g} GB each)",
        f"table:      {table.source}",
        f"rows:       {len(table)}",
        f"feasible:   {table.n_feasible} ({len(table) - table.n_feasible} ran out of memory)",
        "bounds (encoded inputs):",
        *(
            f"  {name:<24} {bounds[0, k].item():g} .. {bounds[1, k].item():g}"
            for k, name in enumerate(instance.input_columns)
        ),
        "best configuration:",
        "  " + ", ".join(f"{k}={v}" for k, v in raw.items()),
        f"  throughput_mean = {row['throughput_mean']:.5f}",
        f"  peak_mem        = {row['peak_mem']:.1f} GB",
    ]
    if instance.published is None:
        lines.append(f"published figures: none for {instance.name}")
    else:
        lines += [
            f"published figures ({instance.dataset_id}): published / this table",
            *(
                f"  {name:<31} {want:>16} {got:>16}  {'ok' if ok else 'DIFFERS'}"
                for name, want, got, ok in checks
            ),
            f"{what} meets its published figures"
            if not missed
            else f"{what} does NOT meet its published figures ({', '.join(missed)})",
        ]
    if table.is_simulated:
        lines.append("NOTE: these numbers are SIMULATED (stand-in), not measured.")
    if table.is_reconstructed:
        lines.append(f"NOTE: this table is {table.source.reconstruction}.")
    click.echo("\n".join(lines))


@main.command(
    short_help="Download the measured table from the Hugging Face Hub (needs network)."
)
@_problem_option()
@click.option(
    "--data-home",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Install here instead of BOLT_PCO64_HOME / the user data folder.",
)
@click.option("--force", is_flag=True, help="Download again even if installed.")
def fetch(problem: str, data_home: Path | None, force: bool) -> None:
    """Download the measured table from the Hugging Face Hub (needs network).

    The download is validated before it is installed; a failed or invalid
    download changes nothing.
    """
    from bolt_pco64.tables.fetch import FetchError, fetch_table
    from bolt_pco64.tables.table import TableError

    try:
        path = fetch_table(data_home, instance=problem, force=force)
    except (FetchError, TableError, OSError) as err:
        raise _one_line(err) from err
    click.echo(f"measured table installed: {path}")


@main.command(
    short_help="Write the SIMULATED stand-in table (seed 0: the shipped file), or "
    "the reconstruction from published traces (--from-traces)."
)
@_problem_option(allow_all=True)
@click.option(
    "--out",
    "out",
    default=None,
    type=click.Path(path_type=Path),
    help="Parquet file to write (atomically). With --problem all --from-traces "
    "shipped: a folder, or none to rebuild the shipped reconstructions and "
    "their registry in place.",
)
@click.option("--seed", default=0, show_default=True, help="Seed of the noise.")
@click.option(
    "--variant",
    default=None,
    help="Stand-in variant (bolt_pco64.tables.standins.STANDIN_VARIANTS) [default: the "
    "problem's default variant].",
)
@click.option(
    "--from-traces",
    "traces",
    multiple=True,
    metavar="PATH|shipped",
    help="Write the reconstruction from published traces instead (design §7): a "
    "results file, a folder of them (*.json), or 'shipped' for the package's own "
    "traces of the problem; repeatable. 'shipped' reproduces the shipped table.",
)
def generate(
    problem: str,
    out: Path,
    seed: int,
    variant: str | None,
    traces: tuple[str, ...],
) -> None:
    """Write the SIMULATED stand-in table (seed 0 reproduces the shipped file),
    or with --from-traces the table reconstructed from published traces of the
    measured table (the shipped traces reproduce the shipped reconstruction).
    A refused trace writes nothing. ``--problem all --from-traces shipped``
    rebuilds every shipped reconstruction (and, without --out, the registry)
    bit for bit."""
    if problem == "all":
        if traces != ("shipped",):
            raise CLIError("--problem all: expected --from-traces shipped alone")
        from bolt_pco64.tables.reconstruct.build import rebuild_shipped

        for path in rebuild_shipped(out):
            click.echo(str(path))
        return
    if out is None or out.is_dir():
        raise CLIError(f"--out: expected a parquet file path, got {out}")
    if traces:
        _generate_from_traces(problem, out, traces)
        return
    from bolt_pco64.instances import get_instance
    from bolt_pco64.tables.simulate import write_simulated_table
    from bolt_pco64.tables.standins import check_variant

    try:
        check_variant(get_instance(problem), variant)
    except ValueError as err:
        raise CLIError(f"--variant: {err}") from err
    try:
        chosen = {} if variant is None else {"variant": variant}
        path = write_simulated_table(out, seed=seed, instance=problem, **chosen)
    except OSError as err:
        raise CLIError(f"--out: expected a writable path, got {out}: {err}") from err
    click.echo(str(path))


def _trace_files(problem: str, traces: tuple[str, ...]) -> list[Path]:
    from bolt_pco64.tables import locations

    files: list[Path] = []
    for item in traces:
        if item == "shipped":
            files.extend(locations.trace_paths(problem))
            continue
        path = Path(item).expanduser()
        if path.is_dir():
            found = sorted(path.glob("*.json"))
            if not found:
                raise CLIError(
                    f"--from-traces: expected *.json files in {path}, got none"
                )
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise CLIError(f"--from-traces: no such file or folder: {path}")
    return files


def _generate_from_traces(problem: str, out: Path, traces: tuple[str, ...]) -> None:
    from bolt_pco64.tables.reconstruct.build import write_reconstructed_table
    from bolt_pco64.tables.traces import TraceError

    files = _trace_files(problem, traces)
    try:
        path = write_reconstructed_table(out, instance=problem, paths=files)
    except (TraceError, ValueError) as err:
        raise _one_line(err) from err
    except OSError as err:
        raise CLIError(f"--out: expected a writable path, got {out}: {err}") from err
    click.echo(str(path))
