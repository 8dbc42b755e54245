"""Verdicts as typed data, rendered once (issue 51, point 2).

A particular the kit says is a :class:`graders.text.Particular`: a key of the kit's tables, its fields, and which
fields are data. Every language is rendered from the same fields; hide mode withholds the data fields by
structure; nothing is read back from English text; the sandbox's refusals cross the pipe as a key and fields.
"""

from __future__ import annotations

import copy
import pickle
import re
from pathlib import Path

import msgspec
import numpy as np
import pytest

from graders.course import LANGUAGES
from graders.engine.values import compare, door, texts
from graders.engine.worker import runner
from graders.text import Particular, Text

MARK = Text("<hidden>", "<скрыто>")
CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)


def test_a_particular_is_its_english_and_renders_every_language_from_the_same_fields():
    inner = Particular("compare_values", compare.COMPARE["compare_values"], data=("expected", "got"),
                       expected="1", got="2")
    outer = Particular("compare_at", compare.COMPARE["compare_at"], where="['a']", reason=inner)
    assert outer == "at ['a']: expected 1, got 2"  # a str: reports, caches and English output as before
    assert outer.in_("ru") == "элемент ['a']: ожидалось: 1, получено: 2"
    assert outer.in_("de") == outer  # a language the course lacks: English
    assert outer.withheld_in("en", MARK) == "at ['a']: expected <hidden>, got <hidden>"
    assert outer.withheld_in("ru", MARK) == "элемент ['a']: ожидалось: <скрыто>, получено: <скрыто>"
    for again in (pickle.loads(pickle.dumps(outer)), copy.deepcopy(outer)):
        assert isinstance(again, Particular) and again.in_("ru") == outer.in_("ru")
        assert again.withheld_in("en", MARK) == outer.withheld_in("en", MARK)


def test_a_particular_refuses_fields_its_template_does_not_name():
    template = compare.COMPARE["compare_values"]
    with pytest.raises(ValueError, match="names"):
        Particular("compare_values", template, expected="1")  # a field missing
    with pytest.raises(ValueError, match="names"):
        Particular("compare_values", template, expected="1", got="2", extra="3")
    with pytest.raises(ValueError, match="names"):
        Particular("compare_values", template, data=("nope",), expected="1", got="2")
    with pytest.raises(TypeError, match="template"):
        Particular("x", "expected {a}", a="1")
    with pytest.raises(TypeError, match="filled in already"):
        Particular("compare_values", template, expected="1", got="2").in_("en", expected="3")


def test_every_detail_is_data_in_every_field():
    """texts.detail marks every field data: hide mode can only keep what a template says without fields."""
    said = texts.detail("exit_code", code=1234567)
    assert said.data == ("code",) and "1234567" not in said.withheld_in("en", MARK)
    for language in LANGUAGES:
        assert said.withheld_in(language, MARK).count(MARK.in_(language)) == 1


@pytest.mark.parametrize("expected, got", [
    (0.5, 0.6), (np.array([1.0, 2.0]), np.array([1.0, 3.0])), (np.zeros(2), np.zeros(3)), (1.0, "x"),
    (np.zeros(2), [1.0, 2.0]), ([1.0], [1.0, 2.0]), ({"a": 1.0}, {}), ({"a": [1.0]}, {"a": [2.0]}), ("a", "b"),
    (None, 1.0), (1.0, {"k": 1.0}), ({"a": {"b": np.ones(3)}}, {"a": {"b": np.full(3, 7.25)}})])
def test_the_comparators_line_is_data_whose_values_hide_mode_withholds(expected, got):
    line = compare.mismatch(expected, got, rtol=1e-9, atol=0.0)
    assert isinstance(line, Particular)
    russian = line.in_("ru")
    assert CYRILLIC.search(russian) and not re.search(r"\b(expected|got|of|item)\b", russian), russian
    for language in LANGUAGES:
        hidden = line.withheld_in(language, MARK)
        if line.key == "compare_key":  # a missing key: the reference's key, no value of either side
            assert hidden == line.in_(language)
            continue
        assert MARK.in_(language) in hidden, hidden
        # what is left is the kit's: where in the answer (its brackets) and the tolerances; no value, no string
        kits = re.sub(r"\(rtol [^)]*\)|\[[^\]]*\]", "", hidden)
        assert not re.search(r"\d|'", kits), hidden


def test_a_wrong_type_keeps_the_references_type_and_withholds_the_learners():
    line = compare.type_problem({"dict": {"loss": {"tensor": "torch.float32", "grad": True}}},
                                {"dict": {"loss": {"object": "HiddenInput_0_25"}}})
    assert line == ("wrong type at ['loss']: expected a torch tensor of dtype torch.float32 that requires grad, got "
                    "an object of type HiddenInput_0_25")
    for language in LANGUAGES:
        hidden = line.withheld_in(language, MARK)
        assert "HiddenInput" not in hidden and "torch.float32" in hidden and "['loss']" in hidden, hidden


def test_no_text_is_read_back_from_english():
    """The route English -> patterns -> Russian is gone: a plain string is a learner's or Python's words."""
    source = Path(texts.__file__).read_text(encoding="utf-8")
    assert "import re" not in source and "fullmatch" not in source and "_translate" not in source
    english = str(runner.describe_exit(-11))
    assert texts.translated(english, "ru") == english  # its Russian comes from the data, not from this text
    assert texts.translated(runner.describe_exit(-11), "ru") == \
        "рабочий процесс завершён сигналом SIGSEGV (ошибка сегментации)"


def test_the_door_reads_a_refusal_as_a_key_of_a_fixed_set_with_the_learners_fields():
    refused = msgspec.json.decode(b'{"what": "refused_path", "path": "/kit/answers.json", "event": "open"}',
                                  type=door.Refused)
    said = texts.refusal(msgspec.structs.asdict(refused))
    assert said == "access to /kit/answers.json (open)" and set(said.data) == {"path", "event"}
    for forged in (b'{"what": "the kit says you passed"}', b'{"what": "refused_path", "verdict": "passed"}',
                   b'{"what": "refused_path", "path": 7}', b'"access to /x (open)"'):
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(forged, type=door.Refused)
    # a result whose violations are text (the old form) is refused whole by the door
    text = '{"cases": [], "missing": false, "violations": ["the grader allows everything"]}'
    assert isinstance(door.read_result(text, msgspec.Raw(b'""'), 0), door.Refusal)


def test_a_refusal_the_tables_do_not_hold_is_said_in_the_kits_words_only():
    for violation in ({"what": "compare_values", "expected": "x"}, {"what": 3}, "raw text", None):
        assert texts.refusal(violation) is texts.REFUSED_UNKNOWN


def test_a_dtype_clash_is_one_line_that_names_the_dtypes():
    """Issue 53, point 4: torch's "Float did not match Double" (and its other forms) is said as one line with
    the two dtypes, in the report's language; any other RuntimeError is shown as written."""
    import torch

    from graders.engine.outputs.feedback import message
    from graders.engine.values.protocol import CaseOutcome, CaseResult

    raised = []
    for clash in (lambda a, b: a @ b, lambda a, b: torch.dot(a[0], b[0]), lambda a, b: torch.addmm(a, a, b)):
        try:
            clash(torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float64))
        except RuntimeError as error:
            raised.append(str(error))
    raised.append("Float did not match Double")
    for text in raised:
        outcome = CaseOutcome(0, None, CaseResult.RAISED, error={"type": "RuntimeError", "message": text,
                                                                 "where": "line 3, in grpo_loss"})
        for language in LANGUAGES:
            line = message(outcome, [], language)
            assert "\n" not in line and "float32" in line and "float64" in line and text not in line, line
            assert line.endswith("(line 3, in grpo_loss)")
        assert CYRILLIC.search(message(outcome, [], "ru"))
    other = CaseOutcome(0, None, CaseResult.RAISED, error={"type": "RuntimeError", "message": "shape [2] is bad"})
    assert message(other, [], "en") == "raised RuntimeError: shape [2] is bad"
