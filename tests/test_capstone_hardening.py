"""Capstone grading against hostile passports and zips (issue 19): a malformed passport -- nested past the
parser, nulls in log_history, strings where numbers go, NaN/Infinity, huge numbers, lists where objects go,
missing keys, huge strings, non-UTF-8 bytes, lone surrogates -- is graded as malformed, naming the field and
the problem (English and Russian), never a crash, and `rl4llm capstone check` and `rl4llm capstone grade`
agree on it; a zip bomb is refused by the engine's capped reader. Each beside a valid passport that keeps
its full score.

The valid runs here are built by hand (no training: the passport a tiny run writes, its figures, an adapter
of arbitrary bytes, the kit's verifier) and graded with the engine's verifier verdict and the adapter's
re-evaluation stubbed (they are graded for real in tests/test_capstone.py); the one slow test grades a real
tiny run through a zip, re-evaluation included.
"""

from __future__ import annotations

import copy
import json
import math
import re
import shutil
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graders.capstone.passport import check_passport
from graders.capstone.claims import CLAIM_NAMES
from graders.capstone.grade import (FIGURES, VERIFIER_FILE, ZIP_MAX_MEMBER_BYTES, ZIP_MAX_TOTAL_BYTES, GradeCheck,
                                    grade_submission)
from graders.capstone.run.data import TINY_ROWS, canonical_hash
from graders.capstone.run.learner_loss import LOSS_FILE
from graders.capstone.run.models import sha256_file
from graders.capstone.run.passport import (json_safe, library_versions, plot_reward_curve, reward_curve, sha256_tree,
                                         write_passport)
from graders.capstone.run.passport_check import MAX_PASSPORT_BYTES, passport_problems, read_passport
from graders.capstone.run.profiles import PASSPORT_SCHEMA, PROFILES, VERIFIER_VERSION
from graders.cli import main
from graders.paths import SOLUTIONS_DIR

# slow: the capstone's tooling; the module's fixture builds real TRL trainer arguments (TRL's import, about 4 s a
# worker, before any test). Not a risk of everyday changes (exercises, checks, hints, texts, docs).
pytestmark = pytest.mark.slow

KIT_VERIFIER = SOLUTIONS_DIR / "module_09" / "module_9_reference.py"
KIT_LOSS = SOLUTIONS_DIR / "module_08" / LOSS_FILE
VERIFIER_POINTS = 3.0
FULL_VERIFIER = GradeCheck("verifier", VERIFIER_POINTS, VERIFIER_POINTS, "stub: the engine's verdict")
# the learner-code check is stubbed at 3 points for both (a real DPO "loss" check is worth 7: tests/test_capstone.py)
FULL_SCORE = {"grpo": 22.0, "dpo": 22.0}
# What the grader "measures" (reevaluate stubbed): the synthetic passports claim exactly this.
MEASURED = {"grpo": {"before": {"greedy_accuracy": 0.0}, "after": {"greedy_accuracy": 0.8}},
            "dpo": {"before": {"pair_accuracy": 0.47, "mean_margin": -0.2},
                    "after": {"pair_accuracy": 1.0, "mean_margin": 5.4}}}
AFTER_CHECKS = ("consistency", "figures", *CLAIM_NAMES, "reevaluation", "improvement")
CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)


# ----------------------------------------------------------------------------- a valid run, by hand
def trainer_args(profile, run_dir: Path) -> dict:
    """The trainer_args a CPU run of ``profile`` with seed 42 records: its full TRL config (no training)."""
    from graders.capstone.run.run import trainer_arguments

    return json_safe(trainer_arguments(profile, run_dir, seed=42, progress=False).to_dict())


def _passport(algorithm: str, run_dir: Path) -> dict:
    """The passport a tiny run of ``algorithm`` writes (graders/capstone/run/run.py), for the files in run_dir."""
    profile = PROFILES[(algorithm, "tiny")]
    steps = profile.trainer_settings["max_steps"]
    key = "reward" if algorithm == "grpo" else "rewards/margins"
    history = [{"step": step, "loss": 0.5 - step / 1000, key: step / steps, "entropy": None, "epoch": step / 10}
               for step in range(1, steps + 1)]
    history.append({"step": steps, "train_runtime": 1.5, "train_loss": 0.4})
    train_rows, eval_rows = TINY_ROWS[profile.data.dataset]
    metrics = {when: {**values, "prompts": 20} for when, values in MEASURED[algorithm].items()}
    verifier = ({"path": VERIFIER_FILE, "version": VERIFIER_VERSION, "sha256": sha256_file(run_dir / VERIFIER_FILE)}
                if algorithm == "grpo" else None)
    loss = {"path": LOSS_FILE, "sha256": sha256_file(run_dir / LOSS_FILE)} if algorithm == "dpo" else None
    return {
        "schema": PASSPORT_SCHEMA, "algorithm": algorithm, "profile": "tiny", "device": "cpu",
        "precision": {"use_cpu": True, "bf16": False, "fp16": False, "dtype": "float32"}, "overrides": {},
        "processes": {"num_processes": 1, "distributed_type": "DistributedType.NO"},
        "command": ["rl4llm", "capstone", "run"], "finished_at": "2026-01-01T00:00:00+00:00",
        "seeds": {"seed": 42, "data_seed": None}, "versions": library_versions(),
        "model": {"id": profile.model, "vocab_size": 17},
        "trainer_class": {"grpo": "GRPOTrainer", "dpo": "LearnerLossDPOTrainer"}[algorithm],
        "trainer_args": trainer_args(profile, run_dir),
        "lora": {"used": True, "trainable_parameters": 8192, **profile.lora},
        "adapter": {"path": "adapter", "files": sha256_tree(run_dir / "adapter")}, "verifier": verifier, "loss": loss,
        "data": {"dataset": profile.data.dataset, "train_split": profile.data.train_split,
                 "eval_split": profile.data.eval_split, "train_rows": len(train_rows()),
                 "eval_rows": len(eval_rows()), "train_sha256": canonical_hash(train_rows()),
                 "eval_sha256": canonical_hash(eval_rows()), "filter": None},
        "metrics": metrics, "reward_curve": reward_curve(history, algorithm), "log_history": history,
        "wall_time_s": {"train": 1.5, "total": 2.5},
    }


@pytest.fixture(scope="module")
def templates(tmp_path_factory) -> dict[str, Path]:
    """{algorithm: a valid run folder}: passport, figures, adapter, the kit's verifier (GRPO) or loss (DPO)."""
    root = tmp_path_factory.mktemp("valid")
    figure = plot_reward_curve({"metric": "reward", "steps": [1, 2], "values": [0.0, 1.0]}, root / "figure.png",
                               "a figure")
    folders = {}
    for algorithm in ("grpo", "dpo"):
        run_dir = root / algorithm
        (run_dir / "adapter").mkdir(parents=True)
        (run_dir / "adapter" / "adapter_config.json").write_text('{"peft_type": "LORA", "r": 8}', encoding="utf-8")
        (run_dir / "adapter" / "adapter_model.safetensors").write_bytes(algorithm.encode() * 100)
        for name in FIGURES:
            shutil.copy(figure, run_dir / name)
        shutil.copy(KIT_VERIFIER if algorithm == "grpo" else KIT_LOSS, run_dir)
        write_passport(run_dir, _passport(algorithm, run_dir))
        folders[algorithm] = run_dir
    return folders


@pytest.fixture
def stubbed(monkeypatch):
    """The adapter's re-evaluation answers MEASURED (no model is loaded here)."""
    calls = []

    def reevaluate(passport, submission, model=None, data_dir=None):
        calls.append(passport["algorithm"])
        return copy.deepcopy(MEASURED[passport["algorithm"]])

    monkeypatch.setattr("graders.capstone.grade.reevaluate", reevaluate)
    monkeypatch.setattr("graders.capstone.grade.grade_learner_code",
                        lambda sources, algorithm="grpo", language="en": {name: FULL_VERIFIER for name in sources})
    return calls


def _copy(templates, tmp_path: Path, algorithm: str = "grpo", name: str = "run") -> Path:
    return shutil.copytree(templates[algorithm], tmp_path / name)


def _load(run_dir: Path) -> dict:
    return json.loads((run_dir / "passport.json").read_text(encoding="utf-8"))


def _save(run_dir: Path, passport: dict) -> None:
    (run_dir / "passport.json").write_text(json.dumps(passport), encoding="utf-8")


def _grade(run_dir: Path, language: str = "en") -> dict:
    return grade_submission(run_dir, language=language, verifier_check=FULL_VERIFIER)


def _by_name(report: dict) -> dict[str, dict]:
    return {check["name"]: check for check in report["checks"]}


def assert_agree(check: dict, grade: dict) -> None:
    """`capstone grade` holds `capstone check`'s verdicts, and a passport check calls unusable is unusable."""
    graded = _by_name(grade)
    for item in check["checks"]:
        mine = graded[f"passport.{item['name']}"]
        assert (mine["points"] == 1.0) == item["passed"] and mine["message"] == item["message"], item["name"]
    if not (check["checks"][0]["passed"] and check["checks"][1]["passed"]):
        assert all(graded[name]["points"] == 0 for name in AFTER_CHECKS)
        assert grade["score"] == graded["verifier"]["points"] + check["score"]


def assert_full(run_dir: Path, algorithm: str = "grpo") -> None:
    check = check_passport(run_dir)
    assert check["score"] == check["max_score"] == 12, check
    grade = _grade(run_dir)
    assert grade["score"] == grade["max_score"] == FULL_SCORE[algorithm], grade
    assert_agree(check, grade)


@pytest.mark.parametrize("algorithm", ["grpo", "dpo"])
def test_a_valid_passport_keeps_its_full_score(templates, stubbed, tmp_path, algorithm):
    run_dir = _copy(templates, tmp_path, algorithm)
    assert passport_problems(_load(run_dir)) == []
    assert_full(run_dir, algorithm)
    assert stubbed == [algorithm]  # graded up to the re-evaluation


# ----------------------------------------------------------------------------- malformed passports, by kind
def _set(path: str, value):
    """A change setting the field at ``path`` ("metrics.after.greedy_accuracy", "log_history[0].step")."""
    def change(passport: dict) -> None:
        *parents, last = _parts(path)
        target = passport
        for part in parents:
            target = target[part]
        target[last] = value
    return change


def _delete(path: str):
    def change(passport: dict) -> None:
        *parents, last = _parts(path)
        target = passport
        for part in parents:
            target = target[part]
        del target[last]
    return change


def _parts(path: str) -> list:
    return [int(part[1:-1]) if part.startswith("[") else part for part in re.findall(r"\[\d+\]|[^.\[\]]+", path)]


def _nested(depth: int):
    value = []
    for _ in range(depth):
        value = [value]
    return value


def _no_steps(passport: dict) -> None:
    for entry in passport["log_history"]:
        entry.pop("step")


def _seed_everywhere(value):
    def change(passport: dict) -> None:
        passport["seeds"]["seed"] = passport["trainer_args"]["seed"] = value
    return change


# (id, change of the passport dict, or raw bytes of passport.json; words the "passport" check must say)
MALFORMED = [
    ("log_history_nulls", _set("log_history", [None, None, None]), "log_history[0] must be an object, found null"),
    ("log_entry_list", _set("log_history[2]", [1, 2]), "log_history[2] must be an object, found [...]"),
    ("log_step_string", _set("log_history[0].step", "1"), 'log_history[0].step must be an integer, found "1"'),
    ("log_step_missing", _no_steps, "log_history[0].step is missing"),
    ("log_value_string", _set("log_history[1].reward", "high"),
     'log_history[1].reward must be a number or null, found "high"'),
    ("seed_string", _seed_everywhere("42"), 'seeds.seed must be an integer, found "42"'),
    ("seed_negative", _seed_everywhere(-1), "seeds.seed is -1, outside 0..4294967295"),
    ("metric_string", _set("metrics.after.greedy_accuracy", "0.8"),
     'metrics.after.greedy_accuracy must be a number, found "0.8"'),
    ("metric_huge_integer", _set("metrics.after.greedy_accuracy", 10**30),
     "metrics.after.greedy_accuracy is 1000000000000000000000000000000, outside"),
    ("wall_time_nan", _set("wall_time_s.total", math.nan), "wall_time_s.total must be a finite number, found NaN"),
    ("wall_time_true", _set("wall_time_s.total", True), "wall_time_s.total must be a number, found true"),
    ("wall_time_huge_integer", _set("wall_time_s.total", 10**400), "wall_time_s.total is 1000000000"),
    ("curve_infinity", _set("reward_curve.values[0]", math.inf),
     "reward_curve.values[0] must be a finite number, found Infinity"),
    ("curve_steps_dict", _set("reward_curve.steps", {"1": 2}), "reward_curve.steps must be a list, found {...}"),
    ("learning_rate_nan", _set("trainer_args.learning_rate", -math.inf),
     "trainer_args.learning_rate must be a finite number, found -Infinity"),
    ("lora_list", _set("lora", [8, 16]), "lora must be an object, found [...]"),
    ("trainer_args_list", _set("trainer_args", []), "trainer_args must be an object, found []"),
    ("versions_string", _set("versions", "torch 2"), 'versions must be an object, found "torch 2"'),
    ("verifier_list", _set("verifier", ["module_9_reference.py"]), "verifier must be an object or null, found [...]"),
    ("adapter_files_list", _set("adapter.files", ["adapter_model.safetensors"]),
     "adapter.files must be an object, found [...]"),
    ("overrides_string", _set("overrides", "none"), 'overrides must be an object, found "none"'),
    ("device_number", _set("device", 0), "device must be a string, found 0"),
    ("metrics_missing_after_is_object", _set("metrics.after", None), "metrics.after must be an object, found null"),
    ("extra_huge_string", _set("notes", "x" * 100_000), "notes is a string of 100000 characters, at most 4096"),
    ("nested_below_the_parser", _set("extra", _nested(500)), "extra[0][0][0][0][0][0][0]... nests deeper than 16"),
    ("lone_surrogate_value", _set("versions.torch", "2.13\ud800"),
     "versions.torch holds a lone surrogate '\\ud800', which is not text"),
    ("lone_surrogate_key", _set("\udfffnote", 1), "a key holding a lone surrogate '\\udfff'"),
    ("nested_past_the_parser", b'{"schema": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
     "passport.json nests too deeply to parse"),
    ("huge_float_literal", b"WALL_TIME_1e999", "wall_time_s.total must be a finite number, found Infinity"),
    ("integer_of_5000_digits", b"WALL_TIME_" + b"7" * 5000, "passport.json is not valid JSON: Exceeds the limit"),
    ("non_utf8_bytes", b"VERSION_\xff\xfe", "passport.json is not UTF-8 text (byte"),
    ("too_large", b"PAD", f"passport.json is larger than {MAX_PASSPORT_BYTES} bytes"),
]


def _write_malformed(run_dir: Path, change) -> None:
    passport = _load(run_dir)
    if callable(change):
        change(passport)
        _save(run_dir, passport)
        return
    text = json.dumps(passport)
    if change.startswith(b"WALL_TIME_"):
        passport["wall_time_s"]["total"] = "@@"
        data = json.dumps(passport).encode().replace(b'"@@"', change[len(b"WALL_TIME_"):])
    elif change.startswith(b"VERSION_"):
        passport["versions"]["torch"] = "@@"
        data = json.dumps(passport, ensure_ascii=False).encode().replace(b"@@", change[len(b"VERSION_"):])
    elif change == b"PAD":  # every string short, the file past the cap
        passport["notes"] = ["x" * 4000] * (MAX_PASSPORT_BYTES // 4000 + 10)
        data = json.dumps(passport).encode()
    else:
        data = change
    assert data != text.encode()
    (run_dir / "passport.json").write_bytes(data)


@pytest.mark.parametrize("change, words", [row[1:] for row in MALFORMED], ids=[row[0] for row in MALFORMED])
def test_a_malformed_passport_is_graded_as_malformed_by_check_and_grade(templates, stubbed, tmp_path, change, words):
    valid = _copy(templates, tmp_path, name="valid")
    run_dir = _copy(templates, tmp_path)
    _write_malformed(run_dir, change)
    check = check_passport(run_dir)
    failed = {item["name"]: item["message"] for item in check["checks"] if not item["passed"]}
    assert words in failed.get("passport", ""), check["checks"][0]
    assert check["score"] == 0 and set(failed) == {item["name"] for item in check["checks"]}
    russian = check_passport(run_dir, "ru")["checks"][0]["message"]
    assert CYRILLIC.search(russian) and russian != failed["passport"]
    grade = _grade(run_dir)  # never raises
    assert_agree(check, grade)
    assert grade["score"] == VERIFIER_POINTS and stubbed == []  # nothing re-evaluated
    ru_grade = _grade(run_dir, "ru")
    assert _by_name(ru_grade)["passport.passport"]["message"] == russian
    assert check_passport(valid)["score"] == 12  # the untouched copy beside it keeps every point


def test_a_hash_of_the_wrong_kind_names_its_key(templates, stubbed, tmp_path):
    run_dir = _copy(templates, tmp_path)
    passport = _load(run_dir)
    passport["adapter"]["files"]["adapter_config.json"] = 7
    _save(run_dir, passport)
    message = check_passport(run_dir)["checks"][0]["message"]
    assert "adapter.files['adapter_config.json'] must be a string, found 7" in message
    assert_agree(check_passport(run_dir), _grade(run_dir))


def test_the_cli_check_and_grade_agree_on_a_passport_of_nulls(templates, stubbed, tmp_path, capsys):
    """The issue's passport: `capstone check` gave it 12/12 and `capstone grade` raised TypeError."""
    valid = _copy(templates, tmp_path, name="valid")
    run_dir = _copy(templates, tmp_path)
    passport = _load(run_dir)
    passport["log_history"] = [None] * len(passport["log_history"])
    _save(run_dir, passport)
    assert main(["capstone", "check", str(run_dir), "--lang", "en"]) == 0
    printed = capsys.readouterr().out
    assert "score: 0/12" in printed and "log_history[0] must be an object, found null" in printed
    assert main(["capstone", "grade", str(run_dir), "--out", str(tmp_path / "out"), "--lang", "ru"]) == 0
    printed = capsys.readouterr().out
    assert "баллы: 3/22" in printed and "log_history[0] должно быть объектом, а найдено null" in printed
    assert main(["capstone", "grade", str(valid), "--out", str(tmp_path / "out-valid")]) == 0
    assert "score: 22/22" in capsys.readouterr().out


def test_the_cli_check_prints_a_passport_with_a_lone_surrogate(templates, tmp_path, capsys):
    run_dir = _copy(templates, tmp_path)
    passport = _load(run_dir)
    passport["verifier"]["path"] = "\udce9.py"  # a file name os.fsdecode could not make text of
    _save(run_dir, passport)
    assert main(["capstone", "check", str(run_dir)]) == 0
    printed = capsys.readouterr().out
    printed.encode("utf-8")  # printable: no surrogate reaches the report
    assert "verifier.path holds a lone surrogate '\\udce9'" in printed
    report = json.loads((run_dir / "capstone_report.json").read_text(encoding="utf-8"))
    assert report["score"] == 0


def test_a_nested_passport_is_read_without_recursion(tmp_path):
    (tmp_path / "passport.json").write_text('{"a": ' * 50_000 + "1" + "}" * 50_000, encoding="utf-8")
    assert read_passport(tmp_path / "passport.json")[1] == "passport_too_deep"
    deep = _nested(900)  # the parser takes it; the structure check walks it without recursing
    assert [problem.key for problem in passport_problems({"a": deep})] == ["passport_problem_deep"]


# ----------------------------------------------------------------------------- any field, any wrong value
def _kind(value) -> str:
    """The JSON kind of ``value`` (True and False are one kind: a flag flipped is well formed)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def _paths(value, prefix: tuple = (), depth: int = 0):
    """Every path of a passport to depth 3 (two log entries, two curve points: the rest alike)."""
    if depth == 3:
        return
    items = value.items() if isinstance(value, dict) else enumerate(value[:2]) if isinstance(value, list) else ()
    for key, item in items:
        yield (*prefix, key)
        yield from _paths(item, (*prefix, key), depth + 1)


def _name(parts: tuple) -> str:
    """How a message names a field: ``log_history[0].step``, ``adapter.files['adapter_config.json']``."""
    name = ""
    for part in parts:
        if isinstance(part, int):
            name += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][\w/-]*", part):
            name += f".{part}" if name else part
        else:
            name += f"[{part!r}]"
    return name


# Fields the grader reads whose JSON kind is fixed: a value of another kind there is a malformed passport.
READ_FIELDS = {"schema", "algorithm", "profile", "device", "trainer_class", "seeds", "seeds.seed", "versions",
               "versions.torch", "trainer_args", "lora", "lora.used", "lora.r", "lora.lora_alpha", "data",
               "data.dataset", "data.train_sha256", "metrics", "metrics.before", "metrics.after",
               "metrics.after.greedy_accuracy", "reward_curve", "reward_curve.metric", "reward_curve.steps",
               "reward_curve.values", "reward_curve.values[1]", "wall_time_s", "wall_time_s.total", "log_history",
               "log_history[0]", "log_history[1].step", "adapter", "adapter.files", "overrides", "verifier.sha256"}
WRONG_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["\ud800", "x" * 5000, 10**400, [], {}, [None], {"step": None}, _nested(40), "NaN"]),
    st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=3)), max_size=3),
    st.dictionaries(st.text(max_size=4), st.one_of(st.none(), st.integers()), max_size=3),
)
GRPO_PATHS = None


def _grpo_paths(templates) -> list[tuple]:
    global GRPO_PATHS
    if GRPO_PATHS is None:
        GRPO_PATHS = sorted(set(_paths(_load(templates["grpo"]))), key=repr)
    return GRPO_PATHS


# 60 passports checked twice and graded (about 4 s of CPU); each read field of the wrong kind failing its named
# check (tests/test_capstone_claims.py) and the named tamperings here are the cheaper guards (the whole file is slow)
@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(data=st.data())
def test_any_field_mutated_is_graded_never_crashed_and_check_and_grade_agree(templates, stubbed, data):
    parts = data.draw(st.sampled_from(_grpo_paths(templates)), label="field")
    delete = data.draw(st.booleans(), label="delete") if data.draw(st.integers(0, 4)) == 0 else False
    value = None if delete else data.draw(WRONG_VALUES, label="value")
    with tempfile.TemporaryDirectory(prefix="rl4llm-hardening-") as temp:
        run_dir = shutil.copytree(templates["grpo"], Path(temp) / "run")
        passport = _load(run_dir)
        target = passport
        for part in parts[:-1]:
            target = target[part]
        old = target[parts[-1]]
        if delete:
            del target[parts[-1]]
        else:
            target[parts[-1]] = value
        _save(run_dir, passport)
        check = check_passport(run_dir)
        check_passport(run_dir, "ru")  # every text fills in both languages
        grade = _grade(run_dir)
        assert_agree(check, grade)
        assert grade["score"] <= FULL_SCORE["grpo"]
        said = check["checks"][0]["message"]
        if "malformed passport" in said:  # only what changed can be wrong, and it is named
            assert _name(parts) in said, (parts, said)
        if not delete and _name(parts) in READ_FIELDS and _kind(value) != _kind(old):
            assert not check["checks"][0]["passed"] and _name(parts) in said, (parts, value, said)


# ----------------------------------------------------------------------------- zips
def _zip(run_dir: Path, path: Path, extra=()) -> Path:
    """``run_dir`` zipped at ``path``, plus ``extra`` members: (name, size in bytes of zeros) or (name, bytes)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(run_dir.rglob("*")):
            if file.is_file():
                archive.write(file, file.relative_to(run_dir).as_posix())
        for name, content in extra:
            if isinstance(content, bytes):
                archive.writestr(name, content)
                continue
            with archive.open(name, "w", force_zip64=True) as handle:
                chunk = bytes(1 << 20)
                for _ in range(content >> 20):
                    handle.write(chunk)
    return path


def _refused(report: dict, words: str) -> None:
    assert report["score"] == 0 and report["max_score"] == FULL_SCORE["grpo"], report
    assert all(words in check["message"] and "was refused" in check["message"] for check in report["checks"])


def test_a_valid_zip_keeps_its_full_score(templates, stubbed, tmp_path):
    submission = _zip(templates["grpo"], tmp_path / "valid.zip")
    report = _grade(submission)
    assert report["score"] == report["max_score"] == FULL_SCORE["grpo"], report


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_a_zip_bomb_is_refused_before_it_is_unpacked(templates, stubbed, tmp_path):
    """A few hundred KiB that expand to 400 MiB: refused on the member's size (the header's; a header that
    lies smaller gets no more bytes than it says, zipfile stops there and the CRC fails)."""
    bomb = _zip(templates["grpo"], tmp_path / "bomb.zip", [("adapter/README.md", 400 << 20)])
    assert bomb.stat().st_size < 1 << 20
    _refused(_grade(bomb), f"is too large (419430400 bytes; the limit is {ZIP_MAX_MEMBER_BYTES})")
    assert stubbed == []
    russian = _grade(bomb, "ru")
    assert russian["score"] == 0 and all("отклонён" in check["message"] for check in russian["checks"])
    valid = _zip(templates["grpo"], tmp_path / "valid.zip")
    assert _grade(valid)["score"] == FULL_SCORE["grpo"]


@pytest.mark.slow  # several seconds of grading or learner runs: the fast tier stays a quick loop
def test_many_members_past_the_total_cap_are_refused(templates, stubbed, tmp_path):
    size = 60 << 20  # each under the member cap, together past the total
    members = [(f"trainer/part{index}.bin", size) for index in range(ZIP_MAX_TOTAL_BYTES // size + 1)]
    report = _grade(_zip(templates["grpo"], tmp_path / "many.zip", members))
    _refused(report, f"more than {ZIP_MAX_TOTAL_BYTES} bytes once decompressed")


@pytest.mark.parametrize("name, content, words", [
    ("../escape.txt", b"x", "escapes the folder"),
    ("/abs/passport.json", b"{}", "absolute path"),
    ("passport.json/inside", b"x", "cannot be unpacked"),  # a member where a file of the run is
])
def test_unsafe_zips_are_refused_not_raised(templates, stubbed, tmp_path, name, content, words):
    _refused(_grade(_zip(templates["grpo"], tmp_path / "unsafe.zip", [(name, content)])), words)


def test_a_file_that_is_not_a_zip_is_refused_not_raised(stubbed, tmp_path):
    (tmp_path / "sub.zip").write_bytes(b"PK\x03\x04 not really")
    _refused(_grade(tmp_path / "sub.zip"), "not a readable zip file")


def test_an_oversized_figure_is_not_decoded(templates, stubbed, tmp_path):
    import struct
    import zlib

    run_dir = _copy(templates, tmp_path)
    header = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 0, 0, 0, 0)  # 10^10 pixels declared

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    (run_dir / "training_curves.png").write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                                                  + chunk(b"IDAT", zlib.compress(b"\0" * 1000)) + chunk(b"IEND", b""))
    figures = _by_name(_grade(run_dir))["figures"]
    assert figures["points"] == 0 and "training_curves.png is 100000x100000 pixels, at most" in figures["message"]


# ----------------------------------------------------------------------------- a real tiny run
@pytest.mark.slow
def test_a_real_tiny_run_passes_the_structure_check_and_grades_fully_from_a_zip(tmp_path, monkeypatch):
    from graders.capstone.run.run import RunOptions, run_capstone

    run_dir = tmp_path / "grpo"
    run_capstone(RunOptions("grpo", "tiny", run_dir, verifier=KIT_VERIFIER, progress=False))
    shutil.copy(KIT_VERIFIER, run_dir / VERIFIER_FILE)
    assert passport_problems(_load(run_dir)) == []
    assert check_passport(run_dir)["score"] == 12
    report = _grade(_zip(run_dir, tmp_path / "grpo.zip"))  # the adapter re-evaluated for real
    assert report["score"] == report["max_score"] == FULL_SCORE["grpo"], report
    passport = _load(run_dir)
    passport["log_history"][5] = None
    _save(run_dir, passport)
    report = _grade(_zip(run_dir, tmp_path / "nulls.zip"))
    assert report["score"] == VERIFIER_POINTS
    assert "log_history[5] must be an object, found null" in _by_name(report)["passport.passport"]["message"]


@pytest.mark.parametrize("value, check, words", [
    (None, "passport.verifier", "loss must be an object with path and sha256"),
    ("module_8_training.py", "passport.passport", "loss"),
    ({"path": "module_8_training.py", "sha256": "a" * 64}, "consistency", "loss sha256"),
    ({"path": "module_8_training.py", "sha256": 7}, "passport.passport", "loss.sha256"),
])
def test_a_dpo_passport_with_a_wrong_loss_entry_loses_points_never_crashes(templates, stubbed, tmp_path, value,
                                                                           check, words):
    run_dir = _copy(templates, tmp_path, "dpo")
    passport = _load(run_dir)
    passport["loss"] = value
    _save(run_dir, passport)
    graded = _by_name(_grade(run_dir))
    assert graded[check]["points"] < graded[check]["max_points"] and words in graded[check]["message"], graded[check]


def test_a_dpo_submission_whose_loss_file_was_edited_loses_consistency(templates, stubbed, tmp_path):
    run_dir = _copy(templates, tmp_path, "dpo")
    (run_dir / LOSS_FILE).write_text("# edited after the run\n" + KIT_LOSS.read_text(encoding="utf-8"))
    graded = _by_name(_grade(run_dir))
    assert graded["consistency"]["points"] == 0 and "module_8_training.py does not hash" in graded["consistency"]["message"]


# ----------------------------------------------------------------------------- links: read by the one reader
@pytest.mark.parametrize("target", ["host", "kit", "proc"])
def test_a_linked_file_refuses_the_capstone_folder_and_the_control_follows_it(templates, stubbed, tmp_path,
                                                                             monkeypatch, target):
    assert_full(_copy(templates, tmp_path, name="correct"))
    run_dir = _copy(templates, tmp_path)
    secret = tmp_path / "host.py"
    secret.write_text("HOST_SECRET = 'read from the host'\n")
    name, link = {"host": (VERIFIER_FILE, secret), "kit": (VERIFIER_FILE, KIT_VERIFIER),
                  "proc": (FIGURES[0], Path("/proc/self/mem"))}[target]
    (run_dir / name).unlink()
    (run_dir / name).symlink_to(link)
    graded = []
    monkeypatch.setattr("graders.capstone.grade.grade_learner_code",
                        lambda sources, algorithm="grpo", language="en":
                        graded.append(sources["submission"]) or {"submission": FULL_VERIFIER})
    report = grade_submission(run_dir)
    assert report["score"] == 0 and graded == []
    assert all("symbolic link" in check["message"] for check in report["checks"])
    # the control: the folder read as it was before (the submission itself, links followed)
    monkeypatch.setattr("graders.capstone.grade._unpacked", lambda submission, temp: submission)
    if target == "proc":
        with pytest.raises(OSError):
            grade_submission(run_dir)
    else:
        grade_submission(run_dir)
        assert graded == [link.read_text(encoding="utf-8")]  # the host file, or the kit's reference, graded


def test_the_learner_adapter_config_never_reaches_peft(tmp_path):
    """A tiny base with the profile's LoRA: the learner's exclude_modules regex is compared, never run; wrong
    tensors are refused by name and shape; the control shows PEFT taking the learner's config as it is."""
    pytest.importorskip("peft")
    from peft import PeftConfig, get_peft_model

    from graders.capstone.adapter import check_config, read_adapter
    from graders.capstone.run.models import tiny_model
    from graders.capstone.run.profiles import CapstoneError
    from graders.capstone.run.run import lora_config

    profile = PROFILES[("grpo", "tiny")]
    adapter = tmp_path / "adapter"
    trained = get_peft_model(tiny_model(seed=0), lora_config(profile))
    trained.save_pretrained(adapter)
    config = json.loads((adapter / "adapter_config.json").read_text())
    hostile = "(" + "a?" * 30 + ")" + "a" * 30  # backtracks exponentially over a module's name
    (adapter / "adapter_config.json").write_text(json.dumps({**config, "exclude_modules": hostile}))
    check_config(profile, adapter)
    loaded = read_adapter(profile, tiny_model(seed=1), adapter)
    assert loaded.peft_config["default"].exclude_modules is None
    for name, tensor in trained.state_dict().items():
        if "lora_" in name:
            assert (loaded.state_dict()[name] == tensor).all(), name
    assert PeftConfig.from_pretrained(adapter).exclude_modules == hostile  # the control: PEFT would take it
    (adapter / "adapter_config.json").write_text(json.dumps({**config, "lora_alpha": 4096}))
    with pytest.raises(CapstoneError, match="lora_alpha"):
        check_config(profile, adapter)
    data = (adapter / "adapter_model.safetensors").read_bytes()
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + size])
    name = next(key for key in header if key != "__metadata__")
    for change in ({**header, name + "_extra": header[name]}, {**header, name: {**header[name], "shape": [1, 1]}},
                   {**header, name: {**header[name], "data_offsets": [0, 10**12]}}):
        text = json.dumps(change).encode()
        (adapter / "adapter_model.safetensors").write_bytes(len(text).to_bytes(8, "little") + text + data[8 + size:])
        with pytest.raises(CapstoneError, match="does not hold the profile's LoRA tensors"):
            read_adapter(profile, tiny_model(seed=1), adapter)
