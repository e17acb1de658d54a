"""The three-colour markers (RFC 2697, RFC 2698) and `Color`."""

from __future__ import annotations

import enum
import pickle

from ratekeeper import Color, ManualClock, SrTcm, TrTcm


def test_color_is_an_enum() -> None:
    assert issubclass(Color, enum.Enum)
    assert [c.value for c in Color] == ["green", "yellow", "red"]
    assert Color("yellow") is Color.YELLOW
    assert Color.RED.name == "RED"
    assert Color.__module__ == "ratekeeper"
    assert pickle.loads(pickle.dumps(Color.GREEN)) is Color.GREEN


def test_srtcm_marks_green_then_yellow_then_red(clock: ManualClock) -> None:
    marker = SrTcm(1_000, 1_500, 1_500, clock=clock)
    assert marker.tokens == (1_500, 1_500)
    assert [marker.mark(1_500) for _ in range(3)] == [Color.GREEN, Color.YELLOW, Color.RED]
    assert marker.tokens == (0, 0)
    # Tokens arrive at cir bytes per second into the committed bucket first.
    clock.advance(0.5)
    assert marker.tokens == (500, 0)
    assert marker.mark(500) is Color.GREEN
    assert repr(marker) == "SrTcm(cir=1000, cbs=1500, ebs=1500, clock=ManualClock(now=0.5))"


def test_srtcm_colour_aware_never_improves_a_colour(clock: ManualClock) -> None:
    marker = SrTcm(1_000, 1_000, 1_000, clock=clock)
    assert marker.mark_aware(100, Color.YELLOW) is Color.YELLOW
    assert marker.tokens == (1_000, 900)  # a yellow packet takes excess tokens
    assert marker.mark_aware(100, Color.RED) is Color.RED
    assert marker.tokens == (1_000, 900)  # a red one takes nothing
    assert marker.mark_aware(100, Color.GREEN) is Color.GREEN


def test_trtcm_peak_and_committed(clock: ManualClock) -> None:
    marker = TrTcm(2_000, 2_000, 1_000, 1_000, clock=clock)
    assert marker.tokens == (2_000, 1_000)
    assert marker.mark(1_000) is Color.GREEN
    assert marker.mark(500) is Color.YELLOW
    assert marker.mark(600) is Color.RED  # beyond the peak bucket's 500 left
    assert marker.tokens == (500, 0)
    assert marker.mark_aware(100, Color.YELLOW) is Color.YELLOW
    assert marker.clock is clock
    assert repr(marker).startswith("TrTcm(pir=2000, pbs=2000, cir=1000, cbs=1000, clock=")


def test_a_marker_on_real_time_has_no_clock() -> None:
    assert SrTcm(1, 1, 1).clock is None
    assert TrTcm(1, 1, 1, 1).mark(0) is Color.GREEN
