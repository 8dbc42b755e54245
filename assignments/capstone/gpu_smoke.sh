#!/usr/bin/env bash
# The capstone's smoke runs on ONE CUDA GPU with no network and no Hub weights: a random-weight Qwen3-0.6B
# (all 28 layers, Qwen3's real tokenizer built from qwen.tiktoken), generated DeepMath-style and
# ultrafeedback-style data, 2 GRPO and 2 DPO steps of the smoke profile in bf16, then `capstone check` and
# `capstone grade` on both run folders; prints the step times, the peak GPU memory and a summary table,
# and exits non-zero when a step failed. Target: under 8 minutes on one H200 (not yet measured).
#
#   assignments/capstone/gpu_smoke.sh --tiktoken PATH/qwen.tiktoken [--out DIR] [--wheels DIR] [--eval-rows N]
#   assignments/capstone/gpu_smoke.sh --device cpu [--layers 1] [--out DIR]     the same steps as a CPU dry run
#
# Options:
#   --tiktoken PATH  Qwen's qwen.tiktoken (else $RL4LLM_QWEN_TIKTOKEN); required on CUDA. From PyPI's dashscope
#                    wheel:  pip download dashscope --no-deps -d /tmp/ds &&
#                            unzip -j /tmp/ds/dashscope-*.whl dashscope/resources/qwen.tiktoken -d /tmp/ds
#   --out DIR        a new (or empty) folder for everything the script writes   (default: runs/gpu-smoke)
#   --wheels DIR     first install assignments/capstone/gpu_smoke_wheels.txt from DIR, with no package index
#   --eval-rows N    held-out GRPO rows, 1..8 (default 2): each costs four greedy passes of 512 tokens
#   --device D       cuda (default) or cpu: a dry run (--max-steps 1, 8 completion tokens, DPO --max-length 64,
#                    pairs of at most 40 words) whose grade withholds the dry-run points; without --tiktoken
#                    the byte-level tokenizer
#   --layers N       decoder layers (default: 28 on cuda, Qwen3-0.6B's; 1 on cpu)
#   -h, --help       this text
# Environment: PYTHON (default: .venv/bin/python if there, else python3), RL4LLM_QWEN_TIKTOKEN.
# Exit codes: 0 every step passed; 1 a step failed (the summary names it); 2 a usage error.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "gpu_smoke.sh: $1" >&2; [ "${2:-2}" = 2 ] && echo "(see assignments/capstone/gpu_smoke.sh --help)" >&2; exit "${2:-2}"; }
need_value() { [ "$#" -ge 2 ] && [ -n "$2" ] || die "$1 needs a value"; }

TIKTOKEN=${RL4LLM_QWEN_TIKTOKEN:-}
OUT=runs/gpu-smoke WHEELS="" EVAL_ROWS=2 DEVICE=cuda LAYERS=""
while [ "$#" -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --tiktoken) need_value "$@"; TIKTOKEN=$2; shift 2 ;;
    --out) need_value "$@"; OUT=$2; shift 2 ;;
    --wheels) need_value "$@"; WHEELS=$2; shift 2 ;;
    --eval-rows) need_value "$@"; EVAL_ROWS=$2; shift 2 ;;
    --device) need_value "$@"; DEVICE=$2; shift 2 ;;
    --layers) need_value "$@"; LAYERS=$2; shift 2 ;;
    *) die "unknown argument '$1'" ;;
  esac
done
case "$DEVICE" in cuda|cpu) ;; *) die "--device must be cuda or cpu, got '$DEVICE'" ;; esac
LAYERS=${LAYERS:-$([ "$DEVICE" = cuda ] && echo 28 || echo 1)}
[[ "$LAYERS" =~ ^[1-9][0-9]*$ ]] && [ "$LAYERS" -le 28 ] || die "--layers must be 1..28, got '$LAYERS'"
[[ "$EVAL_ROWS" =~ ^[1-8]$ ]] || die "--eval-rows must be 1..8 (the smoke profile reads test[:8]), got '$EVAL_ROWS'"
if [ -z "$TIKTOKEN" ] && [ "$DEVICE" = cuda ]; then
  die "no qwen.tiktoken given: pass --tiktoken PATH or set RL4LLM_QWEN_TIKTOKEN (the GPU check builds Qwen3's
real tokenizer from it; get it from PyPI's dashscope wheel, see --help)"
fi
[ -z "$TIKTOKEN" ] || [ -f "$TIKTOKEN" ] || die "the qwen.tiktoken file '$TIKTOKEN' does not exist"
[ -z "$WHEELS" ] || [ -d "$WHEELS" ] || die "the wheel folder '$WHEELS' does not exist"
if [ -e "$OUT" ] && [ -n "$(ls -A "$OUT" 2>/dev/null)" ]; then
  die "the output folder '$OUT' exists and is not empty: pass a new --out (nothing is overwritten)"
fi
[ -n "${PYTHON:-}" ] || { [ -x .venv/bin/python ] && PYTHON=.venv/bin/python || PYTHON=python3; }
[ -z "$TIKTOKEN" ] || TIKTOKEN=$(cd "$(dirname "$TIKTOKEN")" && pwd)/$(basename "$TIKTOKEN")

# Offline: nothing may be fetched; the kit is imported from this checkout (no install needed).
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$OUT/logs"
: > "$OUT/steps.tsv"
VERIFIER=solutions/module_09/module_9_reference.py
LOSS=solutions/module_08/module_8_training.py
DRY=(); GRPO_DRY=(); DPO_DRY=(); WORDS=250
if [ "$DEVICE" = cpu ]; then  # a CPU dry run: shorter pairs too (the kit measures them whole, past --max-length)
  DRY=(--device cpu --max-steps 1); GRPO_DRY=(--max-completion-length 8); DPO_DRY=(--max-length 64); WORDS=40
fi
FAILED=0

# step NAME COMMAND...: runs it, its output on the screen and in OUT/logs/NAME.log; records rc and seconds.
step() {
  local name=$1 rc started ended; shift
  echo "== $name: $*"
  started=$(date +%s%N)
  set +e; "$@" 2>&1 | tee "$OUT/logs/$name.log"; rc=${PIPESTATUS[0]}; set -e
  ended=$(( ($(date +%s%N) - started) / 1000000 ))  # milliseconds
  printf '%s\t%s\t%d.%03d\n' "$name" "$rc" $((ended / 1000)) $((ended % 1000)) >> "$OUT/steps.tsv"
  [ "$rc" = 0 ] || { echo "== $name FAILED (exit $rc; log: $OUT/logs/$name.log)"; FAILED=1; }
  return "$rc"
}
rl4llm() { "$PYTHON" -m graders.cli "$@"; }

if [ -n "$WHEELS" ]; then
  step wheels "$PYTHON" -m pip install --no-index --find-links "$WHEELS" -r assignments/capstone/gpu_smoke_wheels.txt \
    || die "the wheels in '$WHEELS' do not install: see $OUT/logs/wheels.log" 1
fi
if [ "$DEVICE" = cuda ]; then
  step cuda "$PYTHON" -c "import torch, sys; ok = torch.cuda.is_available(); print('torch', torch.__version__, \
'CUDA', torch.version.cuda, torch.cuda.get_device_name(0) if ok else 'no GPU visible', 'bf16:', ok and \
torch.cuda.is_bf16_supported()); sys.exit(0 if ok else 1)" \
    || die "torch sees no CUDA GPU: run on a GPU machine, or pass --device cpu for the CPU dry run" 1
fi
TOKENIZER=(); [ -z "$TIKTOKEN" ] || TOKENIZER=(--tiktoken "$TIKTOKEN")
step model "$PYTHON" -m graders.capstone.run.local_qwen "$OUT/model" --layers "$LAYERS" "${TOKENIZER[@]}" \
  || die "the local Qwen3 model could not be built: see $OUT/logs/model.log" 1
step data "$PYTHON" -m graders.capstone.smoke data "$OUT/data" --eval-rows "$EVAL_ROWS" --max-words "$WORDS" \
  || die "the data folders could not be written: see $OUT/logs/data.log" 1

# run ALGO FILE FLAG...: the smoke run with FLAG FILE (the learner's file it uses), then, if it finished,
# check and grade with FILE copied beside the passport as a submission hands it in.
run() {
  local algo=$1 file=$2 flag=$3; shift 3
  if step "$algo-run" rl4llm capstone run --algo "$algo" --profile smoke --out "$OUT/$algo" --model "$OUT/model" \
      --data-dir "$OUT/data/$algo" "$flag" "$file" "${DRY[@]}" "$@" --lang en; then
    cp "$file" "$OUT/$algo/"
    step "$algo-check" rl4llm capstone check "$OUT/$algo" --lang en || true
    step "$algo-grade" rl4llm capstone grade "$OUT/$algo" --model "$OUT/model" --data-dir "$OUT/data/$algo" \
      --out "$OUT/grades/$algo" --lang en || true
  fi
}
run grpo "$VERIFIER" --verifier "${GRPO_DRY[@]}" || true
run dpo "$LOSS" --loss "${DPO_DRY[@]}" || true

echo
set +e; "$PYTHON" -m graders.capstone.smoke summary "$OUT" --device "$DEVICE" | tee "$OUT/summary.txt"
code=${PIPESTATUS[0]}; set -e
[ "$FAILED" = 0 ] || code=1
exit "$code"
