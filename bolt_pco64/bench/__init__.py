"""Benchmark harness: compare BO methods on the pco problems (``bolt-pco64 bench``).

A *run* is one method optimising one problem from one seed for ``budget``
evaluations (the initial design included); a *comparison* is every method
from every seed, written into one output directory. The data flow: a
:class:`~bolt_pco64.bench.spec.ComparisonSpec` (:mod:`~bolt_pco64.bench.spec`)
is run by :func:`~bolt_pco64.bench.comparison.run_comparison` on a table set
(one table, the :class:`~bolt_pco64.bench.family.Family` or the
:class:`~bolt_pco64.bench.variants.StandinVariants`) through a checked
:class:`~bolt_pco64.bench.plan.BenchPlan`; each run
(:func:`~bolt_pco64.bench.run.run_one`, :mod:`~bolt_pco64.bench.loop` on the
simulated clock) asks a method (:mod:`~bolt_pco64.bench.contract`,
:mod:`~bolt_pco64.bench.methods`) for rows and writes its records
(:mod:`~bolt_pco64.bench.records`) into a
:class:`~bolt_pco64.bench.store.ResultStore`, atomically and resumably, on
one of the :mod:`~bolt_pco64.bench.backends`; :mod:`~bolt_pco64.bench.report`
writes the report from the records alone, and
:func:`~bolt_pco64.bench.regenerate.regenerate` rewrites it.

Writing and registering a method of your own: ``docs/benchmarking.md`` and
the tutorial ``examples/custom_method.py``; how the parts fit together:
``docs/architecture.md``.

The names below are imported from their modules on first use, so that
``import bolt_pco64.bench.spec`` (the command line's ``--help``) stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Module -> the public names it defines (each spelled once).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spec": (
        "BenchConfig",
        "ComparisonSpec",
        "ComparisonSpecError",
        "DEFAULTS",
        "Preset",
        "QUICK",
        "QUICK_FAMILY",
    ),
    "comparison": ("SingleTable", "TableSet", "run_comparison"),
    "family": ("Family", "FamilyResult"),
    "variants": ("StandinVariants", "VariantsResult"),
    "plan": ("BenchPlan", "BenchResult", "execute_plan", "make_plan"),
    "contract": (
        "ENTRY_POINT_GROUP",
        "FunctionMethod",
        "Method",
        "MethodFn",
        "ObjectiveModel",
        "Prediction",
        "RunContext",
        "RunKey",
    ),
    "methods.registry": (
        "METHODS",
        "MethodRegistry",
        "get_method",
        "method_names",
        "method_registry",
        "register_method",
    ),
    "proposals": ("Proposal", "resolve_proposal"),
    "run": ("run_one",),
    "records": ("RunOutcome", "record_columns"),
    "store": ("LaneSettingError", "OutputDirError", "ResultStore", "check_output_dir"),
    "backends": (
        "Backend",
        "BackendError",
        "DaskBackend",
        "InProcessBackend",
        "ProcessBackend",
        "make_backend",
    ),
    "report.tables": ("checkpoints_for", "summarize"),
    "report.markdown": ("summary_markdown",),
    "report.plots": ("plot_regret",),
    "report.facts": ("cost_label",),
    "regenerate": ("regenerate",),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
