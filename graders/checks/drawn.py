"""Hidden property cases that depend on their seed alone: :func:`hypothesis_cases` (and ``st``, Hypothesis's
strategies, for check authors), so every process draws the same inputs.

Part of the check authors' API, :mod:`graders.checks` (which re-exports every name here).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import replace

from graders.checks.cases import Case
from graders.text import Text

try:  # re-exported for check authors
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - hypothesis is a core dependency
    st = None


@contextmanager
def _seed_alone():
    """Hypothesis draws as if no module of the kit were loaded.

    Hypothesis (since 6.131) biases generation towards constants it harvests
    from every *local* module in ``sys.modules`` -- here the kit's own code --
    so one seed drew different examples depending on which of the kit's
    modules a process had imported (the grader, the build, a test run, the
    layout of the files). With that harvest empty, the examples depend on the
    seed alone. Internal API: when a Hypothesis release renames it, this
    changes nothing and ``tests/test_engine_units.py`` says so.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without the harvest
        yield
        return
    harvest = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if harvest is None or cache is None:  # pragma: no cover
        yield
        return
    empty = providers.Constants()
    with _SEED_ALONE_LOCK:
        providers._get_local_constants = lambda: empty
        cache.cache.clear()
        try:
            yield
        finally:
            providers._get_local_constants = harvest
            cache.cache.clear()


_SEED_ALONE_LOCK = threading.RLock()


def hypothesis_cases(strategy, *, count: int, seed: int, to_case: Callable[[object], Case]) -> list[Case]:
    """``count`` (or fewer, if the space is small) examples of ``strategy``, identical on every run.

    Hypothesis draws with a fixed ``seed``, no example database and none of
    the constants it would harvest from the modules a process has imported
    (:func:`_seed_alone`), so every submission meets the same inputs. Each example becomes a case via
    ``to_case``; cases without a label get ``"property case #<i>"`` (in Russian ``"случайная проверка #<i>"``).
    """
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fixed_seed

    drawn: list = []

    @_seed_alone()
    @fixed_seed(seed)
    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck), derandomize=False)
    @given(strategy)
    def collect(example) -> None:
        drawn.append(example)

    collect()
    cases = []
    for index, example in enumerate(drawn[:count]):
        case = to_case(example)
        if not case.label:
            case = replace(case, label=Text(f"property case #{index + 1}", f"случайная проверка #{index + 1}"))
        cases.append(case)
    return cases
