"""The ``bench`` command: its options and how they go together.

``bolt-pco64 bench`` with no method, seed or budget option runs the default
comparison, the protocol's design (:data:`~bolt_pco64.bench.spec.DEFAULTS`:
8 methods x seeds 1000-1099 x 100 evaluations, in lanes of 32 seeds);
``--quick`` is a smoke test. Everything is checked before anything is
written: a bad option is a usage error naming it. The options become one
:class:`~bolt_pco64.bench.spec.ComparisonSpec`, which checks the settings once,
run by :func:`~bolt_pco64.bench.comparison.run_comparison` on one table, the
family or the stand-in variants (:mod:`bolt_pco64.cli.bench_run`); a refused
setting is one line led by its option.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from bolt_pco64.bench.spec import (
    DEFAULT_REFERENCE,
    DEFAULTS,
    EARLY_STOP_CHOICES,
    QUICK,
    QUICK_FAMILY,
    BenchConfig,
    seeds_text,
)
from bolt_pco64.cli._core import _TABLE_TYPE, _problem_option, main
from bolt_pco64.cli.bench_run import (
    Runner,
    bench_all,
    bench_one,
    bench_variants,
    make_spec,
    resume_hint,
)
from bolt_pco64.cli.params import (
    _BenchCommand,
    _InstanceFile,
    _LaneWidth,
    _Method,
    _Methods,
    _MethodsOption,
    _Noise,
    _Seeds,
)

__all__ = ["bench"]


@main.command(
    cls=_BenchCommand,
    short_help="Compare BO methods across seeds on a problem, or on all (resumable).",
)
@_problem_option(allow_all=True)
@click.option(
    "--methods",
    cls=_MethodsOption,
    type=_Methods(),
    default=None,
    help="Comma-separated method names, from the list below [default: "
    f"{', '.join(DEFAULTS.methods)}].",
)
@click.option(
    "--seeds",
    type=_Seeds(),
    metavar="N|A-B|S,S...",
    default=None,
    help="The seeds: a count N (seeds 0 to N-1), an inclusive range A-B, or a "
    "comma-separated list of seeds and ranges (3,5,9) [default: the protocol's "
    f"{seeds_text(DEFAULTS.seed_list)}; with --quick {seeds_text(QUICK.seed_list)}].",
)
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=None,
    help=f"Evaluations per run, initial design included [default: {DEFAULTS.budget}].",
)
@click.option(
    "--budget-hours",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="GPU-hours per run (of the instance's cluster) instead of --budget: "
    "runs go on until they are spent, on a simulated clock.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=BenchConfig.workers,
    show_default=True,
    help="Runs in flight at once on the simulated clock, each on its own "
    "cluster; the method sees the others as pending.",
)
@click.option(
    "--early-stop",
    type=click.Choice(EARLY_STOP_CHOICES),
    default=BenchConfig.early_stop,
    show_default=True,
    help="Stop a run after a step when its estimate so far shows it will not "
    "beat the best: the runner's posterior rule, or Ax's percentile rule; a "
    "stopped run is charged the steps it ran.",
)
@click.option(
    "--n-init",
    type=click.IntRange(min=1),
    default=None,
    help=f"Initial design size [default: {BenchConfig.n_init}].",
)
@click.option(
    "--q",
    type=click.IntRange(min=1),
    default=BenchConfig.q,
    show_default=True,
    help="Batch size.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help=f"Output directory [default: {DEFAULTS.out}; with --quick {QUICK.out}; "
    f"with --quick --problem all {QUICK_FAMILY.out}].",
)
@click.option(
    "--quick",
    is_flag=True,
    help=f"A smoke test, too few seeds to compare: {QUICK.describe()}; with "
    f"--problem all, {QUICK_FAMILY.describe()} on each problem.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Local worker processes.",
)
@click.option(
    "--lane-width",
    type=_LaneWidth(),
    metavar="K|none",
    default=DEFAULTS.lane_width,
    show_default=True,
    help="Run each method's seeds in lock-step lanes of this many, as one batched "
    "computation (bolt_pco64.bench.lanes; a seed's records are the same in any "
    "lane, 1 = one seed at a time); 'none' runs one run at a time without lanes "
    "(bolt_pco64.bench.run.run_one, whose records differ from a lane's). A "
    "folder's runs are all made one way: resuming it the other way is refused. "
    "--jobs and Dask split the work by method x lane.",
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
    "--instance",
    "instance",
    type=_InstanceFile(),
    default=None,
    help="Benchmark a user's own instance described in this TOML file "
    "(bolt_pco64.instance_file), instead of --problem; with --table.",
)
@click.option(
    "--standin",
    default=None,
    help="Run on this stand-in variant (bolt_pco64.tables.standins.STANDIN_VARIANTS), or "
    "'all': on every variant into OUT/<variant>/, then OUT/robustness.md.",
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
    default=None,
    help="Method every other one is compared with, seed by seed, in the summary; "
    f"one of the compared methods [default: {DEFAULT_REFERENCE}, or the first "
    f"method when {DEFAULT_REFERENCE} is not compared].",
)
@click.option("--no-progress", is_flag=True, help="No progress bars.")
def bench(
    problem: str,
    methods: list[str] | None,
    seeds: int | tuple[int, ...] | None,
    budget: int | None,
    budget_hours: float | None,
    workers: int,
    early_stop: str,
    n_init: int | None,
    q: int,
    out: Path | None,
    quick: bool,
    jobs: int,
    lane_width: int | None,
    dask_scheduler: str | None,
    table_path: Path | None,
    instance: Any,
    standin: str | None,
    noise: float | str | None,
    reference: str | None,
    no_progress: bool,
) -> None:
    """Compare BO methods on a problem, or on all; resumable (see
    bolt_pco64.bench).

    Without --methods, --seeds and --budget this is the default comparison,
    the protocol's design: 8 methods x seeds 1000-1099 x 100 evaluations, in
    lanes of 32 seeds (800 runs: long; --jobs splits it by method x lane).
    --quick is a smoke test that compares nothing.

    Everything is checked before anything is written: a refused run leaves
    the file system as it was. With --problem all, OUT/<problem>/ holds each
    problem's results and OUT/summary.md and OUT/regret.png the combined ones.
    A rerun of the same command resumes: finished runs are kept. A folder
    holding runs of other methods is summarised with all of them.
    """
    _check_combinations(problem, table_path, instance, standin)
    preset = (QUICK_FAMILY if problem == "all" else QUICK) if quick else DEFAULTS
    ctx = click.get_current_context()
    if ctx.get_parameter_source("lane_width") == click.core.ParameterSource.DEFAULT:
        lane_width = preset.lane_width
    out_dir = out if out is not None else Path(preset.out)
    spec = make_spec(
        preset,
        methods=methods,
        seeds=seeds,
        budget=budget,
        budget_hours=budget_hours,
        n_init=n_init,
        q=q,
        noise=noise,
        workers=workers,
        early_stop=early_stop,
        reference=reference,
    )
    args = _arguments(spec, out_dir, jobs, lane_width, dask_scheduler)
    args.update(
        quick=quick,
        table=None if table_path is None else str(table_path),
        problem=problem if instance is None else instance.name,
    )
    if standin is not None:
        args["standin"] = standin
    run = Runner(spec, args, out_dir, jobs, dask_scheduler, not no_progress, lane_width)
    with resume_hint(out_dir):
        if problem == "all":
            bench_all(run)
        elif standin == "all":
            bench_variants(run, problem)
        else:
            bench_one(run, problem, instance, standin, table_path)


def _arguments(
    spec: Any, out: Path, jobs: int, lane_width: int | None, dask_scheduler: str | None
) -> dict[str, Any]:
    """What ``meta.json`` records as the arguments: the checked settings, the
    explicit seeds and how the runs execute."""
    return {
        "methods": list(spec.methods),
        "seeds": list(spec.seeds),
        "budget": spec.budget,
        "budget_hours": spec.budget_hours,
        "workers": spec.workers,
        "early_stop": spec.early_stop,
        "n_init": spec.n_init,
        "q": spec.q,
        "out": str(out),
        "jobs": jobs,
        "lane_width": lane_width,
        "dask_scheduler": dask_scheduler,
        "noise": spec.noise,
        "reference": spec.reference,
    }


def _check_combinations(
    problem: str, table_path: Path | None, instance: Any, standin: str | None
) -> None:
    """Options that cannot go together (the spec checks the settings)."""
    if problem == "all" and table_path is not None:
        raise click.BadParameter(
            "expected one --problem for a table file, got --problem all",
            param_hint="'--table'",
        )
    if instance is not None and (problem == "all" or standin is not None):
        raise click.BadParameter(
            "expected no --problem all and no --standin with an instance file",
            param_hint="'--instance'",
        )
    if standin is not None:
        _check_standin(standin, problem, table_path)


def _check_standin(standin: str, problem: str, table_path: Path | None) -> None:
    """``--standin``: one problem, no ``--table``, a variant it ships (or all)."""
    from bolt_pco64.instances import get_instance
    from bolt_pco64.tables.standins import check_variant

    if problem == "all" or table_path is not None:
        raise click.BadParameter(
            "expected one --problem and no --table with --standin",
            param_hint="'--standin'",
        )
    if standin != "all":
        try:
            check_variant(get_instance(problem), standin)
        except ValueError as err:
            raise click.BadParameter(str(err), param_hint="'--standin'") from err
