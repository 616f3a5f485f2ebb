"""Where an instance's table files live (docs/architecture.md §1).

An instance's measured table is looked for in ``data/`` of a source checkout,
then in the data home (:func:`data_home`), where ``bolt-pco64 fetch`` installs
it; its reconstruction from the published traces
(:func:`reconstructed_table_path`), the traces themselves
(:func:`trace_paths`) and its simulated stand-in
(:func:`bundled_table_path`) ship with the package.
:func:`bolt_pco64.tables.table.load_table` decides which one is read. Nothing here
reads or writes a table.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from bolt_pco64 import instances
from bolt_pco64.instances import DEFAULT_INSTANCE, Instance

__all__ = [
    "ENV_HOME",
    "bundled_table_path",
    "checkout_data_dir",
    "data_home",
    "measured_table_paths",
    "reconstructed_table_path",
    "trace_paths",
]

#: The data home of every instance (see :func:`data_home`).
ENV_HOME = "BOLT_PCO64_HOME"


def data_home(data_home: str | os.PathLike[str] | None = None) -> Path:
    """The folder where the measured table is installed by ``bolt-pco64 fetch``.

    The argument wins, then the ``BOLT_PCO64_HOME`` environment variable, then
    the platform's user data folder (``platformdirs.user_data_dir``). The folder
    is not created here.
    """
    if data_home is not None:
        return Path(data_home).expanduser()
    env = os.environ.get(ENV_HOME)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("bolt_pco64", appauthor=False))


def checkout_data_dir() -> Path | None:
    """``data/`` of a source checkout (one with ``pyproject.toml``), if this is one.

    Searched first for a measured table and last for a stand-in; tests replace
    this function to isolate themselves from a developer's ``data/``.
    """
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "data").is_dir():
        return root / "data"
    return None


def bundled_table_path(
    instance: str | Instance = DEFAULT_INSTANCE, variant: str | None = None
) -> Path:
    """Path of ``instance``'s shipped simulated stand-in table (wheel or checkout).

    ``variant`` names one of its shipped variants
    (:data:`bolt_pco64.tables.standins.STANDIN_VARIANTS`); ``None`` is the default.

    Raises:
        FileNotFoundError: If the installation lacks it.
        ValueError: If the instance ships no such variant.
    """
    # Imported here: standins needs NumPy, and this module stays light.
    from bolt_pco64.tables.standins import standin_filename

    name = standin_filename(instances.get_instance(instance), variant)
    packaged = resources.files("bolt_pco64") / "data" / name
    if packaged.is_file():
        return Path(str(packaged))
    checkout = checkout_data_dir()
    if checkout is not None and (checkout / name).is_file():
        return checkout / name
    raise FileNotFoundError(
        f"The shipped stand-in table {name!r} is missing from the "
        "installation; reinstall bolt_pco64."
    )


def _shipped(relative: str) -> Path | None:
    """A file shipped under ``data/`` (the wheel's ``bolt_pco64/data/`` or the
    checkout's ``data/``), or ``None`` if this installation lacks it."""
    packaged = resources.files("bolt_pco64").joinpath("data", *relative.split("/"))
    if packaged.is_file():
        return Path(str(packaged))
    checkout = checkout_data_dir()
    if checkout is not None and (checkout / relative).is_file():
        return checkout / relative
    return None


def trace_paths(instance: str | Instance = DEFAULT_INSTANCE) -> list[Path]:
    """Paths of ``instance``'s shipped trace files (its ``trace_files``), in order.

    Raises:
        FileNotFoundError: If the installation lacks one of them.
    """
    out = []
    for relative in instances.get_instance(instance).trace_files:
        path = _shipped(f"traces/{relative}")
        if path is None:
            raise FileNotFoundError(
                f"The shipped trace file {relative!r} is missing from the "
                "installation; reinstall bolt_pco64."
            )
        out.append(path)
    return out


def reconstructed_table_path(
    instance: str | Instance = DEFAULT_INSTANCE,
) -> Path | None:
    """Path of ``instance``'s shipped reconstruction, or ``None`` if not shipped."""
    return _shipped(instances.get_instance(instance).reconstructed_filename)


def measured_table_paths(instance: str | Instance = DEFAULT_INSTANCE) -> list[Path]:
    """Places searched, in order, for ``instance``'s measured table (they may not exist)."""
    name = instances.get_instance(instance).measured_filename
    paths = []
    checkout = checkout_data_dir()
    if checkout is not None:
        paths.append(checkout / name)
    paths.append(data_home() / name)
    return paths
