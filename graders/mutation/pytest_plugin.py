"""A pytest plugin that runs the selected public tests once per mutant, in ONE pytest process.

Loaded with ``-p graders.mutation.pytest_plugin`` by :mod:`graders.mutation.public`
(never by a learner's run). ``--mutants-in`` names a JSON file
``[{"id", "module", "source"}, ...]``; for each mutant the plugin defines the
mutated function in the learner module the tests imported (``exec`` of its
source in that module's namespace, exactly what appending it to the file does;
a name another module bound at import, ``from module_9_training import
grpo_loss``, is pointed at the mutant too),
wraps it with ``starter/conftest.py``'s recorder (its "likely mistake" hints
work as in a learner's run, settled over the mutant's whole run as at the end
of a learner's), runs every selected test (``-k``), and puts the
original back. The reference itself runs first (``id`` ``"(reference)"``). The
verdicts go to the JSON file ``--mutants-out``:
``{id: {"failed": [nodeid, ...], "hints": [line, ...]}}``. A test that runs past
:data:`ITEM_SECONDS` (wall clock) fails with ``TimeoutError``.
"""

from __future__ import annotations

import __future__
import json
import signal
import sys

import pytest

REFERENCE = "(reference)"
ITEM_SECONDS = 30.0


class _Collector:
    """The failing tests of each mutant; their hint lines once the conftest has settled them (:meth:`harvest`)."""

    def __init__(self) -> None:
        self.current = None
        self.results: dict[str, dict] = {}
        self.reports: list = []  # the current mutant's failing reports

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report):
        if self.current is None or not report.failed:
            return
        entry = self.results.setdefault(self.current, {"failed": [], "hints": []})
        if report.nodeid not in entry["failed"]:
            entry["failed"].append(report.nodeid)
        self.reports.append(report)

    def harvest(self, conftest) -> None:
        """Settle the conftest's hints over the mutant's whole run (as at the end of a learner's run), then
        keep every hint line of its failing reports."""
        if conftest is not None and hasattr(conftest, "SESSION_HINTS"):
            conftest.SESSION_HINTS.settle()
        entry = self.results.setdefault(self.current, {"failed": [], "hints": []})
        for report in self.reports:
            for title, text in report.sections:
                if title == "rl4llm hint":
                    entry["hints"] += [line for line in text.splitlines() if line not in entry["hints"]]
        self.reports = []


def _conftest(config):
    for plugin in config.pluginmanager.get_plugins():
        if hasattr(plugin, "_wrap_module") and hasattr(plugin, "RECORDER"):
            return plugin
    return None


def _alarm(signum, frame):  # noqa: ARG001 - signal handler signature
    raise TimeoutError(f"a public test ran past {ITEM_SECONDS:g} s on this mutant")


def _rebind(before: dict, after: dict) -> list[tuple[dict, str, object]]:
    """Point every other module's name for a replaced function (``from module_9_training import grpo_loss``
    in a test file, bound at import) at its new value, as a file with the mutant appended would have been
    imported; returns what to put back."""
    changed = {id(before[name]): after[name] for name in after
               if name in before and after[name] is not before[name] and callable(before[name])}
    rebound = []
    for other in list(sys.modules.values()):
        namespace = getattr(other, "__dict__", None)
        if not isinstance(namespace, dict) or namespace is after:
            continue
        for name, value in list(namespace.items()):
            if id(value) in changed:
                rebound.append((namespace, name, value))
                namespace[name] = changed[id(value)]
    return rebound


def _run_items(session) -> None:
    items = session.items
    for index, item in enumerate(items):
        signal.setitimer(signal.ITIMER_REAL, ITEM_SECONDS)
        try:
            item.ihook.pytest_runtest_protocol(item=item, nextitem=items[index + 1] if index + 1 < len(items) else None)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)


def pytest_addoption(parser):
    parser.addoption("--mutants-in", default=None, help="rl4llm mutate: the JSON list of mutants to run the tests on")
    parser.addoption("--mutants-out", default=None, help="rl4llm mutate: where the verdicts go (JSON)")


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    path = session.config.getoption("--mutants-in")
    if not path or session.testsfailed or session.config.option.collectonly:
        return None
    mutants = json.loads(open(path, encoding="utf-8").read())
    collector = _Collector()
    session.config.pluginmanager.register(collector, "rl4llm-mutants")
    conftest = _conftest(session.config)
    previous = signal.signal(signal.SIGALRM, _alarm)
    collector.current = REFERENCE
    collector.results[REFERENCE] = {"failed": [], "hints": []}
    _run_items(session)
    collector.harvest(conftest)
    for mutant in mutants:
        module = sys.modules.get(mutant["module"])
        if module is None:
            collector.results[mutant["id"]] = {"failed": [], "hints": [], "error": "module not imported"}
            continue
        saved = dict(vars(module))
        collector.current, collector.reports = mutant["id"], []
        collector.results[mutant["id"]] = {"failed": [], "hints": []}
        rebound = []
        try:
            code = compile(mutant["source"], f"<mutant {mutant['id']}>", "exec",
                           flags=__future__.annotations.compiler_flag, dont_inherit=True)
            exec(code, vars(module))  # noqa: S102 - a kit-generated mutant of the kit's own reference
            if conftest is not None:
                conftest._wrap_module(module)
            rebound = _rebind(saved, vars(module))
            _run_items(session)
            collector.harvest(conftest)
        finally:
            for namespace, name, value in rebound:
                namespace[name] = value
            vars(module).clear()
            vars(module).update(saved)
    signal.signal(signal.SIGALRM, previous)
    collector.current = None
    with open(session.config.getoption("--mutants-out"), "w", encoding="utf-8") as handle:
        json.dump(collector.results, handle)
    return True
