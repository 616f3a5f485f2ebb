"""The ``bolt-pco64`` command line: parsing, messages, lazy imports.

A bad option value is a usage error in click's form (usage, a hint, and an
``Error:`` line naming the option, e.g. ``Invalid value for '--noise':
expected 'measured' or a number >= 0, got -1``). Every other failure is one
line on standard error. Both exit with status 2.

Commands import what they need when they run: ``--help``, ``bench --help``
and ``info`` do not import BoTorch or GPyTorch. Third-party deprecation
warnings that a user cannot act on (:data:`QUIET_WARNINGS`) are not shown,
in this process or in the harness's worker processes.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from bolt_pco64.bench.config import DEFAULTS, QUICK, QUICK_FAMILY
from bolt_pco64.instances import INSTANCES, Instance, get_instance

__all__ = ["QUIET_WARNINGS", "CLIError", "main"]

#: ``(message prefix, category)`` of the third-party warnings the commands
#: hide: the deprecation raised while GPyTorch's ``linear_operator`` is
#: imported, and its note that a GP fit added jitter to a covariance matrix
#: (a ``NumericalWarning``, a ``RuntimeWarning``), printed once per fit.
QUIET_WARNINGS: tuple[tuple[str, type[Warning]], ...] = (
    ("`torch.jit.script` is deprecated", FutureWarning),
    ("`torch.jit.script` is deprecated", DeprecationWarning),
    ("A not p.d", RuntimeWarning),
)


@contextlib.contextmanager
def _quiet_third_party() -> Iterator[None]:
    """Hide :data:`QUIET_WARNINGS` here and in child processes, then restore.

    Child Python processes (the ``--jobs`` workers) get the filters through
    ``sys.warnoptions``, which :mod:`multiprocessing` passes on as ``-W``
    options after any ``-W`` the user gave, so that they win over a blanket
    ``-W default``. (Not through ``PYTHONWARNINGS``: Python drops a ``-W``
    option that repeats one of it, which would let ``-W default`` win.)
    """
    options = [f"ignore:{msg}:{cat.__name__}" for msg, cat in QUIET_WARNINGS]
    before = list(sys.warnoptions)
    sys.warnoptions.extend(options)
    try:
        with warnings.catch_warnings():
            for msg, cat in QUIET_WARNINGS:
                warnings.filterwarnings("ignore", message=re.escape(msg), category=cat)
            yield
    finally:
        sys.warnoptions[:] = before


class CLIError(click.ClickException):
    """A one-line error that exits with status 2."""

    exit_code = 2


class _Main(click.Group):
    """The command group; every invocation runs with third-party warnings hidden."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        with _quiet_third_party():
            return super().main(*args, **kwargs)


class _Noise(click.ParamType):
    """``--noise``: ``measured`` or a standard deviation ``>= 0``."""

    name = "measured|STD"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float | str:
        if value == "measured" or isinstance(value, float):
            return value
        text = str(value).strip()
        if text.lower() == "measured":
            return "measured"
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if not (math.isfinite(number) and number >= 0):
            self.fail(f"expected 'measured' or a number >= 0, got {value}", param, ctx)
        return number


class _Methods(click.ParamType):
    """``--methods``: comma-separated names of registered methods."""

    name = "NAME[,NAME...]"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> list[str]:
        if isinstance(value, list):
            return value
        from bolt_pco64.bench.methods import method_names

        known = method_names()
        names = list(dict.fromkeys(m.strip() for m in str(value).split(",")))
        names = [m for m in names if m]
        unknown = [m for m in names if m not in known]
        if not names or unknown:
            self.fail(
                f"expected comma-separated names from {', '.join(sorted(known))}, "
                f"got {', '.join(unknown) if unknown else repr(value)}",
                param,
                ctx,
            )
        return names


class _Method(click.ParamType):
    """``--reference``: the name of one registered method."""

    name = "NAME"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> str:
        from bolt_pco64.bench.methods import method_names

        known = method_names()
        name = str(value).strip()
        if name not in known:
            self.fail(
                f"expected one of {', '.join(sorted(known))}, got {value!r}",
                param,
                ctx,
            )
        return name


class _MethodsOption(click.Option):
    """``--methods`` whose help lists every method, entry points included,
    when the help is shown (not when the command line is imported)."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from bolt_pco64.bench.methods import method_names

        record = super().get_help_record(ctx)
        if record is None:
            return None
        return record[0], f"{record[1]} Available: {', '.join(method_names())}."


def _one_line(err: BaseException, origin: str | None = None) -> CLIError:
    text = " ".join(str(err).split())
    return CLIError(f"{origin}: {text}" if origin else text)


def _table_origin(table_path: Path | None, instance: Instance) -> str | None:
    """What named the table: ``--table``, the environment variable, or nothing."""
    if table_path is not None:
        return "--table"
    return instance.env_table if os.environ.get(instance.env_table) else None


def _load(table_path: Path | None, problem: str = "pco64") -> Any:
    """``problem``'s table, or a one-line :class:`CLIError` naming its origin.

    The stand-in's Python warning is not shown: the commands say it in words.
    """
    from bolt_pco64.table import SimulatedTableWarning, TableError, load_table

    instance = get_instance(problem)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SimulatedTableWarning)
            return load_table(table_path, instance=instance)
    except (TableError, OSError, ValueError) as err:
        raise _one_line(err, _table_origin(table_path, instance)) from err


def _published_check(table: Any) -> list[tuple[str, str, str, bool]]:
    """``(figure, published, this table, equal)`` for each published figure.

    Values are compared as published: the best value to 5 decimals (as the
    pco64 card gives it), peaks to 0.1 GB.
    """
    inst: Instance = table.instance
    pub = inst.published
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


_PROBLEM_NAMES = sorted(INSTANCES)


def _problem_option(allow_all: bool = False) -> Any:
    names = [*_PROBLEM_NAMES, "all"] if allow_all else _PROBLEM_NAMES
    return click.option(
        "--problem",
        type=click.Choice(names),
        default="pco64",
        show_default=True,
        help="The instance"
        + (" ('all': each one, with a combined summary)." if allow_all else "."),
    )


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="bolt_pco64")
def main() -> None:
    """pco16, pco32, pco64: LLM-training throughput on 16, 32 and 64 GPUs by
    parallelism configuration, as BoTorch test problems with out-of-memory
    crashes."""


_TABLE_TYPE = click.Path(dir_okay=False, path_type=Path)


@main.command()
@_problem_option()
@click.option(
    "--table",
    "table_path",
    type=_TABLE_TYPE,
    default=None,
    help="Inspect this table file (parquet or raw CSV) instead of the default.",
)
def info(problem: str, table_path: Path | None) -> None:
    """Which table is in use, its size, bounds and best configuration, and
    whether it meets the figures published about the measured table."""
    from bolt_pco64.table import decode_inputs

    table = _load(table_path, problem)
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
    click.echo("\n".join(lines))


@main.command()
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
    from bolt_pco64.fetch import FetchError, fetch_table
    from bolt_pco64.table import TableError

    try:
        path = fetch_table(data_home, instance=problem, force=force)
    except (FetchError, TableError, OSError) as err:
        raise _one_line(err) from err
    click.echo(f"measured table installed: {path}")


@main.command()
@_problem_option()
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Parquet file to write (atomically).",
)
@click.option("--seed", default=0, show_default=True, help="Seed of the noise.")
def generate(problem: str, out: Path, seed: int) -> None:
    """Write the SIMULATED stand-in table (seed 0 reproduces the shipped file)."""
    from bolt_pco64.simulate import write_simulated_table

    try:
        path = write_simulated_table(out, seed=seed, instance=problem)
    except OSError as err:
        raise CLIError(f"--out: expected a writable path, got {out}: {err}") from err
    click.echo(str(path))


@main.command()
@_problem_option(allow_all=True)
@click.option(
    "--methods",
    cls=_MethodsOption,
    type=_Methods(),
    default=None,
    help=f"Comma-separated method names [default: {','.join(DEFAULTS.methods)}].",
)
@click.option(
    "--seeds",
    type=click.IntRange(min=1),
    default=None,
    help=f"Seeds per method [{DEFAULTS.seeds}].",
)
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=None,
    help=f"Evaluations per run, initial design included [{DEFAULTS.budget}].",
)
@click.option(
    "--n-init",
    type=click.IntRange(min=1),
    default=None,
    help=f"Initial design size [{DEFAULTS.n_init}].",
)
@click.option(
    "--q",
    type=click.IntRange(min=1),
    default=DEFAULTS.q,
    show_default=True,
    help="Batch size.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help=f"Output directory [{DEFAULTS.out}, or {QUICK.out}, or {QUICK_FAMILY.out}].",
)
@click.option(
    "--quick",
    is_flag=True,
    help=f"{QUICK.describe()}; with --problem all, {QUICK_FAMILY.describe()} "
    "on each problem.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=DEFAULTS.jobs,
    show_default=True,
    help="Local worker processes.",
)
@click.option(
    "--dask-scheduler", default=None, help="Address of a running Dask scheduler."
)
@click.option(
    "--table",
    "table_path",
    type=_TABLE_TYPE,
    default=None,
    help="Benchmark on this table file instead of the default.",
)
@click.option(
    "--noise",
    type=_Noise(),
    default=None,
    help="Observation noise: 'measured' or a standard deviation (default: none).",
)
@click.option(
    "--reference",
    type=_Method(),
    default=DEFAULTS.reference,
    show_default=True,
    help="Method every other one is compared with, seed by seed, in the summary.",
)
@click.option("--no-progress", is_flag=True, help="No progress bars.")
def bench(
    problem: str,
    methods: list[str] | None,
    seeds: int | None,
    budget: int | None,
    n_init: int | None,
    q: int,
    out: Path | None,
    quick: bool,
    jobs: int,
    dask_scheduler: str | None,
    table_path: Path | None,
    noise: float | str | None,
    reference: str,
    no_progress: bool,
) -> None:
    """Compare BO methods on a problem, or on all; resumable (see
    bolt_pco64.bench).

    Everything is checked before anything is written: a refused run leaves
    the file system as it was. With --problem all, OUT/<problem>/ holds each
    problem's results and OUT/summary.md and OUT/regret.png the combined ones.
    """
    from bolt_pco64.bench.benchmark import run_benchmark

    if problem == "all" and table_path is not None:
        raise click.BadParameter(
            "expected one --problem for a table file, got --problem all",
            param_hint="'--table'",
        )
    preset = (QUICK_FAMILY if problem == "all" else QUICK) if quick else DEFAULTS
    names = methods if methods is not None else list(preset.methods)
    out_dir = out if out is not None else Path(preset.out)
    args: dict[str, Any] = {
        "methods": names,
        "seeds": seeds if seeds is not None else preset.seeds,
        "budget": budget if budget is not None else preset.budget,
        "n_init": n_init if n_init is not None else preset.n_init,
        "q": q,
        "out": str(out_dir),
        "quick": quick,
        "jobs": jobs,
        "dask_scheduler": dask_scheduler,
        "table": None if table_path is None else str(table_path),
        "noise": noise,
        "problem": problem,
        "reference": reference,
    }
    if problem == "all":
        _bench_all(args, out_dir, no_progress)
        return
    table = _load(table_path, problem)
    t0 = time.perf_counter()
    try:
        result = run_benchmark(
            table=table, **_harness_arguments(args, out_dir, no_progress)
        )
    except (ValueError, OSError) as err:
        raise _one_line(err) from err
    lines = [result.summary_markdown.rstrip(), *_failures(result.errors, "meta.json")]
    resumed = len(result.summary) and (
        int(result.summary["runs"].sum() + result.summary["failed"].sum())
        - len(result.ran)
    )
    lines.append("")
    lines.append(
        f"{len(result.ran)} run(s) done, {resumed} resumed from {result.out}, "
        f"in {time.perf_counter() - t0:.0f} s."
    )
    lines.append(f"plot: {result.plot}")
    if table.is_simulated:
        lines.append(
            "NOTE: these results are on the SIMULATED stand-in table, not measured "
            "data (`bolt-pco64 fetch` installs the measured one)."
        )
    click.echo("\n".join(lines))


def _harness_arguments(
    args: dict[str, Any], out_dir: Path, no_progress: bool
) -> dict[str, Any]:
    """The keyword arguments ``run_benchmark`` and ``run_problems`` share,
    from ``bench``'s resolved ``args`` (recorded as ``arguments``)."""
    return {
        "methods": args["methods"],
        "seeds": args["seeds"],
        "budget": args["budget"],
        "n_init": args["n_init"],
        "q": args["q"],
        "out": out_dir,
        "noise": args["noise"],
        "jobs": args["jobs"],
        "dask_scheduler": args["dask_scheduler"],
        "progress": not no_progress,
        "arguments": args,
        "reference": args["reference"],
    }


def _failures(errors: dict[str, str], where: str) -> list[str]:
    """Lines naming the failed runs (none when ``errors`` is empty)."""
    if not errors:
        return []
    return [
        "",
        f"{len(errors)} run(s) failed (see {where}):",
        *[f"  {k}: {v}" for k, v in errors.items()],
    ]


def _bench_all(args: dict[str, Any], out_dir: Path, no_progress: bool) -> None:
    """``bench --problem all``: every instance, then the combined summary."""
    from bolt_pco64.bench.family import run_problems
    from bolt_pco64.table import SimulatedTableWarning, TableError

    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SimulatedTableWarning)
            result = run_problems(
                problems=_PROBLEM_NAMES,
                **_harness_arguments(args, out_dir, no_progress),
            )
    except (TableError, ValueError, OSError) as err:
        raise _one_line(err) from err
    lines = [
        result.summary_markdown.rstrip(),
        *_failures(result.errors, "each meta.json"),
    ]
    lines.append("")
    lines.append(
        f"{len(result.ran)} run(s) done in {time.perf_counter() - t0:.0f} s; "
        f"each problem's results in {result.out}/<problem>/."
    )
    lines.append(f"plot: {result.plot}")
    simulated = [
        p
        for p, r in result.results.items()
        if r.table is not None and r.table.is_simulated
    ]
    if simulated:
        lines.append(
            f"NOTE: the results on {', '.join(simulated)} are on SIMULATED stand-in "
            "tables, not measured data."
        )
    click.echo("\n".join(lines))
