"""The ``bench`` command's option types and its help on the methods.

The types look methods up in :mod:`bolt_pco64.bench.methods.registry` only when a
value is converted or the help is shown. Neither that module nor the
built-in methods' (:mod:`bolt_pco64.bench.methods`, whose
:data:`~bolt_pco64.bench.methods.catalog.BUILTINS` gives each method's help line)
imports torch.
"""

from __future__ import annotations

import math
import re
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


#: A number as the options take it: ASCII digits only.
_DIGITS = re.compile(r"[0-9]+")


class _Seeds(click.ParamType):
    """``--seeds``: a count ``N`` (seeds ``0..N-1``), an inclusive range
    ``A-B``, or a comma-separated list of seeds and ranges (``3,5,9``,
    ``1000-1049,2000``); the seeds are distinct and ``>= 0``."""

    name = "N|A-B|S,S..."

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> int | tuple[int, ...]:
        if isinstance(value, int | tuple):
            return value
        text = str(value).strip()
        try:
            if "," not in text and "-" not in text:
                count = int(text) if _DIGITS.fullmatch(text) else 0
                if count < 1:
                    raise ValueError(text)
                return count
            seeds = [s for part in text.split(",") for s in _seed_range(part)]
        except ValueError:
            self.fail(
                "expected a count (20), a range (1000-1099) or a list (3,5,9) of "
                f"seeds >= 0, got {value!r}",
                param,
                ctx,
            )
        repeated = sorted({s for s in seeds if seeds.count(s) > 1})
        if repeated:
            self.fail(
                f"expected distinct seeds, got {', '.join(map(str, repeated))} more "
                "than once",
                param,
                ctx,
            )
        return tuple(seeds)


def _seed_range(part: str) -> range:
    """``"7"`` -> seed 7; ``"1000-1099"`` -> 1000..1099 (inclusive, not empty).

    Raises:
        ValueError: If ``part`` is neither.
    """
    first, dash, last = (p.strip() for p in part.strip().partition("-"))
    if not _DIGITS.fullmatch(first) or (dash and not _DIGITS.fullmatch(last)):
        raise ValueError(part)
    low, high = int(first), int(last) if dash else int(first)
    if high < low:
        raise ValueError(part)
    return range(low, high + 1)


class _LaneWidth(click.ParamType):
    """``--lane-width``: seeds per lane, an integer ``>= 1``, or ``none``
    (one run at a time)."""

    name = "K|none"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> int | None:
        if value is None or isinstance(value, int):
            return value
        text = str(value).strip().lower()
        if text == "none":
            return None
        if _DIGITS.fullmatch(text) and int(text) >= 1:
            return int(text)
        self.fail(
            "expected seeds per lane, an integer >= 1, or 'none' (one run at a "
            f"time), got {value!r}",
            param,
            ctx,
        )


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
