"""Hypothesis settings and strategies shared by the property and fuzz tests.

``BOLT_PCO64_HYPOTHESIS_SCALE`` (default 1) multiplies every ``max_examples``:
CI runs the default (property + fuzz tests together in well under two minutes
on two cores); a nightly or local deep run can set it to 10 or 100.
"""

from __future__ import annotations

import itertools
import os

import pandas as pd
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from bolt_pco64.instances import get_instance
from tests._tables import frame_from, lattice

_SCALE = max(1, int(os.environ.get("BOLT_PCO64_HYPOTHESIS_SCALE", "1")))
RAW_ZERO = (0, 2, 3)


def examples(n: int) -> settings:
    """Settings for one test: ``n`` examples (scaled), no deadline.

    The autouse fixture of ``conftest.py`` only isolates environment variables,
    which is safe to share between the examples of one test.
    """
    return settings(
        max_examples=n * _SCALE,
        deadline=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )


#: A small lattice of raw configurations (zero_stage raw 0/2/3): 864 points.
LATTICE = list(
    itertools.product(
        range(1, 4),
        range(3),
        range(2),
        range(2),
        range(2),
        range(6, 8),
        RAW_ZERO,
        range(2),
    )
)


def encode(config: tuple[int, ...], instance: str = "pco64") -> tuple[float, ...]:
    """The design's encoding, written out independently of the package: the
    ``zero_stage`` input (wherever the instance puts it) becomes 0/1/2."""
    z = get_instance(instance).input_columns.index("zero_stage")
    out = [float(v) for v in config]
    out[z] = float(RAW_ZERO.index(config[z]))
    return tuple(out)


@st.composite
def tables(draw, min_rows: int = 1, max_rows: int = 24, instance: str = "pco64"):
    """``(frame, configs, throughput, peak_mem)`` of a valid generated table of
    ``instance``'s schema (pco64: from :data:`LATTICE`).

    ``throughput[i]`` is ``None`` for an OOM row; at least one row is feasible.
    The frame's rows are in draw order (not canonical order).
    """
    space = LATTICE if instance == "pco64" else lattice(instance)
    configs = draw(
        st.lists(
            st.sampled_from(space), min_size=min_rows, max_size=max_rows, unique=True
        )
    )
    n = len(configs)
    tps = draw(
        st.lists(
            st.one_of(st.none(), st.floats(0.01, 1.0)),
            min_size=n,
            max_size=n,
        )
    )
    if all(t is None for t in tps):
        tps[draw(st.integers(0, n - 1))] = draw(st.floats(0.01, 1.0))
    mems = draw(st.lists(st.floats(1.0, 95.0), min_size=n, max_size=n))
    frame: pd.DataFrame = frame_from(configs, tps, peak_mem=mems, instance=instance)
    return frame, configs, tps, mems
