"""The ``bench`` command's option types and its help on the methods.

The types look methods up in :mod:`bolt_pco64.bench.methods.registry` only when a
value is converted or the help is shown. Neither that module nor the
built-in methods' (:mod:`bolt_pco64.bench.methods`, whose
:data:`~bolt_pco64.bench.methods.catalog.BUILTINS` gives each method's help line)
imports torch.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import click

from bolt_pco64.bench.methods import BUILTINS
from bolt_pco64.cli._core import _Command

__all__ = ["METHOD_HELP"]

#: One line on each built-in method, for ``bench --help`` (read from
#: :data:`bolt_pco64.bench.methods.catalog.BUILTINS`).
METHOD_HELP: Mapping[str, str] = MappingProxyType(
    {name: b.help for name, b in BUILTINS.items()}
)


class _BenchCommand(_Command):
    """``bench``, whose help ends with the methods it can compare."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from bolt_pco64.bench.methods.registry import method_registry

        registry = method_registry()
        rows: list[tuple[str, str]] = []
        for name in registry:
            ep = registry.entry_point(name)
            if ep is not None:
                text = f"from the entry point {ep.value}"
            elif registry[name] is not getattr(BUILTINS.get(name), "method", None):
                text = "registered in this process"
            else:
                text = METHOD_HELP[name]
            rows.append((name, text))
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
        from bolt_pco64.bench.methods.registry import method_names

        known = method_names()
        names = [m.strip() for m in str(value).split(",") if m.strip()]
        repeated = sorted({m for m in names if names.count(m) > 1})
        if repeated:
            self.fail(
                f"expected distinct names, got {', '.join(repeated)} more than once"
            )
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
        from bolt_pco64.bench.methods.registry import method_names

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
        from bolt_pco64.bench.methods.registry import method_names

        record = super().get_help_record(ctx)
        if record is None:
            return None
        return record[0], f"{record[1]} Available: {', '.join(method_names())}."
