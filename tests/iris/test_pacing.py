"""The token bucket on a fake clock, and that only requests over the wire pay for it."""

from __future__ import annotations

import importlib
import threading

import pytest

from cctx_research.net.pacing import TokenBucket

from .test_iris import COMPLETE


class FakeClock:
    """A clock that stands still; sleeps are recorded, not slept (one lock: threads share it)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.lock = threading.Lock()
        self.passed: list[float] = []

    def time(self) -> float:
        with self.lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self.lock:
            self.passed.append(seconds)


def test_slots_are_spaced_one_over_rate_apart():
    clock = FakeClock()
    bucket = TokenBucket(4, clock=clock.time, sleep=clock.sleep)
    for _ in range(5):
        bucket.acquire()
    # all asked at t=0: the k-th waits k/4 s
    assert clock.passed == pytest.approx([0.25, 0.5, 0.75, 1.0])


def test_threads_share_one_rate():
    clock = FakeClock()
    bucket = TokenBucket(10, clock=clock.time, sleep=clock.sleep)
    threads = [threading.Thread(target=bucket.acquire) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # 20 acquisitions at t=0: one passes at once, the others at 0.1 s steps, none twice
    assert sorted(clock.passed) == pytest.approx([0.1 * k for k in range(1, 20)])


def test_burst_lets_that_many_through_after_an_idle_spell():
    clock = FakeClock()
    bucket = TokenBucket(10, burst=3, clock=clock.time, sleep=clock.sleep)
    for _ in range(4):
        bucket.acquire()
    assert clock.passed == pytest.approx([0.1])


@pytest.mark.parametrize(("rate", "burst"), [(0, 1), (-1, 1), (float("inf"), 1), (5, 0)])
def test_bad_rates_are_refused(rate, burst):
    with pytest.raises(ValueError, match=r"rate|burst"):
        TokenBucket(rate, burst=burst)


def test_cache_hits_take_no_slot(make_iris):
    iris = make_iris()
    slots: list[int] = []
    acquire = iris.sender.pace
    iris.sender.pace = lambda: (slots.append(1), acquire())
    nonce = COMPLETE["reply"]["messages"][0]["eventNonce"]
    for _ in range(5):
        iris.messages(0, nonce=nonce)
    assert len(slots) == 1


@pytest.mark.parametrize(
    "name", ["cctx_research.iris", "cctx_research.iris.client", "cctx_research.iris.frames",
             "cctx_research.iris.options", "cctx_research.net.pacing"],
)  # fmt: skip
def test_all_is_sorted_and_resolves(name):
    module = importlib.import_module(name)
    exported = module.__all__

    def key(n: str) -> tuple[int, str]:
        return (0 if n.isupper() else 1 if n[:1].isupper() else 2), n

    assert exported == sorted(exported, key=key)
    assert all(hasattr(module, attr) for attr in exported)
