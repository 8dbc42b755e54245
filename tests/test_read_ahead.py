"""A batch reads its submissions ahead of their grading (graders/engine/routes/ahead.py): in order, each alone, at
most ``ahead`` read and not yet taken, what a read raised raised where it is taken, and a stop that never leaves a
taker waiting."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from graders.engine.routes.ahead import ReadAhead


def test_every_result_is_handed_out_in_its_place():
    reading = ReadAhead(6, lambda index: f"read {index}", ahead=2)
    assert [reading.take(index) for index in range(6)] == [f"read {index}" for index in range(6)]


def test_never_more_than_ahead_are_read_and_waiting():
    read: list[int] = []
    reading = ReadAhead(10, lambda index: read.append(index) or index, ahead=3)
    time.sleep(0.2)
    assert read == [0, 1, 2]  # three read, none taken: the thread waits
    assert reading.take(0) == 0
    time.sleep(0.2)
    assert read == [0, 1, 2, 3]
    assert [reading.take(index) for index in range(1, 10)] == list(range(1, 10))


def test_what_a_read_raised_is_raised_where_it_is_taken_and_the_others_go_on():
    def read(index):
        if index == 1:
            raise ValueError("a bad one")
        return index

    reading = ReadAhead(3, read, ahead=2)
    assert reading.take(0) == 0
    with pytest.raises(ValueError, match="a bad one"):
        reading.take(1)
    assert reading.take(2) == 2


def test_a_pool_of_graders_taking_in_order_never_waits_forever():
    """As the batch uses it: ``jobs`` threads take the indices in the order they were submitted, each graded for
    a random while; every index comes back, and no more than ``ahead`` were ever waiting."""
    waiting, most = [0], [0]
    lock = threading.Lock()

    def read(index):
        time.sleep(0.001 * (index % 3))
        with lock:
            waiting[0] += 1
            most[0] = max(most[0], waiting[0])
        return index

    reading = ReadAhead(40, read, ahead=3)

    def grade(index):
        value = reading.take(index)
        with lock:
            waiting[0] -= 1
        time.sleep(0.002 * (index % 4))
        return value

    with ThreadPoolExecutor(max_workers=2) as pool:
        assert list(pool.map(grade, range(40), timeout=30)) == list(range(40))
    assert most[0] <= 3


def test_a_stop_ends_a_taker_waiting_and_the_reading():
    started = threading.Event()

    def read(index):
        started.set()
        time.sleep(0.3)
        return index

    reading = ReadAhead(5, read, ahead=1)
    started.wait(5)
    taker_error: list[BaseException] = []

    def take_late():
        try:
            reading.take(3)
        except BaseException as error:  # noqa: BLE001 - inspected below
            taker_error.append(error)

    taker = threading.Thread(target=take_late)
    taker.start()
    reading.stop()
    taker.join(5)
    assert not taker.is_alive() and isinstance(taker_error[0], RuntimeError)
    reading._thread.join(5)
    assert not reading._thread.is_alive()
