"""The ``bench`` command's option types and its help on the methods.

The types import the method registry (:mod:`bolt_pco64.bench.methods`) only
when a value is converted or the help is shown, so that ``bench --help``
does not import torch.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import click

from bolt_pco64.cli._core import _Command

__all__ = ["METHOD_HELP"]

#: One line on each built-in method, for ``bench --help`` (which does not
#: import the registry, :data:`bolt_pco64.bench.methods.METHODS`, and with it
#: torch; a test checks that the two name the same methods).
METHOD_HELP: dict[str, str] = {
    "random": "uniform over the untried configurations",
    "qlognei": "constrained qLogNEI over the untried configurations",
    "qlogei": "constrained qLogEI over the untried configurations",
    "ts": "constrained Thompson sampling over the untried configurations",
    "naive": "qLogNEI that records an OOM as the worst feasible value",
    "gpc_ei": "LogEI x P(feasible) of a GP classifier of ran_successfully",
    "tobit_ei": "LogEI x P(margin <= 0) of a GP of the memory margin, "
    "crashes as censored observations",
    "gpc_pof": "LogEI where the classifier's P(feasible) reaches a threshold",
    "qlognei-box": "qlognei optimised over the continuous box, snapped to rows",
    "qlognei-mixed": "qlognei optimised over the integer lattice, snapped to rows",
    "eipu": "qlognei per unit of expected cost (crash risk counted); use "
    "with --budget-hours",
    "ei_cool": "eipu with the cost's exponent cooling from 1 to 0 as the "
    "budget is spent (Lee et al. 2020)",
    "prior_ei": "qlognei on GPs with performance-model prior means "
    "(throughput, memory margin), from 3 initial rows",
    "prior_ei_tp": "prior_ei with the throughput prior only (ablation)",
    "prior_ei_bad": "prior_ei with a deliberately misspecified prior "
    "(constants off by 2x, twice the GPU memory)",
    "qlognei_init3": "qlognei from 3 initial rows (the prior methods' control)",
}


class _BenchCommand(_Command):
    """``bench``, whose help ends with the methods it can compare."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, text) for name, text in METHOD_HELP.items()]
        registry = sys.modules.get("bolt_pco64.bench.methods")
        if registry is not None:  # methods registered in this process, too
            rows += [
                (name, "registered in this process")
                for name in registry.METHODS
                if name not in METHOD_HELP
            ]
        from bolt_pco64.bench.contract import method_entry_points

        rows += [
            (name, f"from the entry point {ep.value}")
            for name, ep in sorted(method_entry_points().items())
            if name not in dict(rows)
        ]
        with formatter.section("Methods (for --methods and --reference)"):
            formatter.write_dl(rows)
        super().format_epilog(ctx, formatter)


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


class _InstanceFile(click.ParamType):
    """``--instance``: a TOML description of an instance
    (:mod:`bolt_pco64.instance_file`), read into an
    :class:`~bolt_pco64.instances.Instance`."""

    name = "FILE.toml"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> Any:
        from bolt_pco64.instance_file import InstanceFileError, read_instance
        from bolt_pco64.instances import Instance

        if isinstance(value, Instance):
            return value
        try:
            return read_instance(value)
        except (OSError, InstanceFileError) as err:
            self.fail(" ".join(str(err).split()), param, ctx)


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
