"""The ``bolt-pco64`` command line: parsing, messages, lazy imports.

A bad option value is a usage error in click's form (usage, a hint, and an
``Error:`` line naming the option, e.g. ``Invalid value for '--noise':
expected 'measured' or a number >= 0, got -1``). Every other failure is one
line on standard error. Both exit with status 2.

Commands import what they need when they run: ``--help``, ``bench --help``
and ``info`` do not import BoTorch or GPyTorch. Third-party deprecation
warnings that a user cannot act on (``QUIET_WARNINGS``) are not shown,
in this process or in the harness's worker processes.
"""

from __future__ import annotations

# Importing the command modules registers their commands on ``main``.
from bolt_pco64.cli import bench as bench
from bolt_pco64.cli import data as data
from bolt_pco64.cli import report as report
from bolt_pco64.cli._core import QUIET_WARNINGS, CLIError, main
from bolt_pco64.cli.params import METHOD_HELP

__all__ = ["METHOD_HELP", "QUIET_WARNINGS", "CLIError", "main"]
