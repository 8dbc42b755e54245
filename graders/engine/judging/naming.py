"""The one rule that names a catalogued mistake, for the grader and the learner's side alike.

An entry of the misconception catalogue EXPLAINS a learner's answers when, on
every check where the learner returned a value, it agrees with that value
within the exercise's comparison -- the checks the learner gets wrong must be
reproduced (an entry that raised there does not explain them), the checks
the learner gets right must not be contradicted (an entry that raised there
is no contradiction: it says nothing about that value). It is named only
when it is the ONE entry that explains them, and only when some check is
wrong; several that do are candidates, none named.

The grader applies it to every check of an exercise (:func:`graders.engine.judging.judge._diagnose`);
the learner's pytest (``starter/conftest.py``) and the notebooks' visible
checks apply it to every public input of a function the learner's run saw,
with the exercise's own tolerances shipped in the hint tables
(:mod:`graders.build.hints`). The learner side runs this very text:
:mod:`graders.build.comparator` copies it verbatim into
``starter/_kit_compare.py`` and the notebooks' helper cell, so it uses the
standard library only and mentions no module of the kit.
"""


class Raised:
    """An entry's outcome on a check where it raised (or its value is unknown there, e.g. too large to ship)."""


def explains(outcome, answers: dict, required, agrees) -> bool:
    """Whether one entry explains the learner's answers: ``outcome(check)`` is the entry's value on a check
    (or :class:`Raised`), ``answers`` {check: the learner's value}, ``required`` the checks the learner gets
    wrong (the evidence), ``agrees(entry value, learner value, check)`` the exercise's comparison. The
    required checks are tried first, so most entries stop after a check or two."""
    order = [check for check in answers if check in required] + [check for check in answers
                                                                 if check not in required]
    for check in order:
        value = outcome(check)
        if value is Raised:
            if check in required:
                return False
        elif not agrees(value, answers[check], check):
            return False
    return True


def explaining(names, outcome, answers: dict, required, agrees) -> tuple:
    """``(named, candidates)``: the one entry of ``names`` that explains the answers (:func:`explains`, with
    ``outcome(name, check)``), else None and the sorted names of those that do when several do; ``(None,
    ())`` when no check is wrong or none explains them."""
    required = set(required)
    if not required:
        return None, ()
    fitting = [name for name in names
               if explains(lambda check, name=name: outcome(name, check), answers, required, agrees)]
    if len(fitting) == 1:
        return fitting[0], ()
    return None, tuple(sorted(fitting))
