"""``SystemLoad``: the real sampler, reading this machine's ``/proc`` and
cgroup files on its own thread."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ratekeeper import Bbr, InvalidArgumentError, SystemGuard, SystemLoad


def first_load_average() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def test_it_reads_this_machines_cpu_within_a_few_intervals() -> None:
    load = SystemLoad(interval=0.01, decay=0.5)
    deadline = time.monotonic() + 5.0
    while load.cpu_usage is None and time.monotonic() < deadline:
        time.sleep(0.01)
    cpu = load.cpu_usage
    assert cpu is not None
    assert 0.0 <= cpu <= 1.0


def test_it_reads_the_load_average_from_proc() -> None:
    load = SystemLoad(interval=0.01)
    # The kernel updates the figure every 5 s; retry until a reading falls
    # between two reads of the file that agree.
    for _ in range(200):
        before = first_load_average()
        reading = load.load_average
        after = first_load_average()
        if before == after and reading == before:
            return
        time.sleep(0.01)
    pytest.fail(f"load_average {load.load_average} never matched /proc/loadavg")


def test_the_shared_sampler_is_the_default_signal() -> None:
    shared = SystemLoad.shared()
    assert isinstance(shared, SystemLoad)
    assert shared.load_average is not None
    assert Bbr().load is None
    assert SystemGuard(max_thread=1).load is None
    assert Bbr(load=shared).load is shared


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"interval": 0}, "interval"),
        ({"interval": 0.0009}, "interval"),
        ({"interval": -1}, "interval"),
        ({"decay": 1.0}, "decay"),
        ({"decay": -0.5}, "decay"),
    ],
)
def test_bad_sampler_options(kwargs: dict[str, float], argument: str) -> None:
    with pytest.raises(InvalidArgumentError) as error:
        SystemLoad(**kwargs)
    assert error.value.argument == argument
