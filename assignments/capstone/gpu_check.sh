#!/usr/bin/env bash
# The capstone on a GPU machine, for an instructor, in one script: preflight, the smoke runs (whose
# clipped ratio decides whether the profile's completion length fits), the full runs, each graded as a
# student's submission would be, and (with 2+ GPUs) a data-parallel smoke run through `accelerate launch`.
#
#   assignments/capstone/gpu_check.sh [--allow-downloads] [OUT]          default OUT: runs/gpu-check
#
# Offline by default: the script exports HF_HUB_OFFLINE=1 itself, so the model and both data sets must
# be in HF_HOME's cache (a Hub snapshot: hub/datasets--trl-lib--DeepMath-103K/snapshots/<rev>/...) or
# given as MODEL / DATA_GRPO / DATA_DPO, and nothing is fetched mid-run; preflight stops at once with the
# fix when something is missing. --allow-downloads (or ALLOW_DOWNLOADS=1) leaves HF_HUB_OFFLINE unset:
# what is missing is downloaded into the cache (the first run on a machine with network access).
#
# Environment (all optional):
#   VERIFIER   the verifier used as GRPO's reward   (default: the kit's reference, solutions/module_09/...)
#   LOSS       the loss DPO trains with              (default: the kit's reference, solutions/module_08/...)
#   MODEL      a local Qwen3-0.6B folder            (default: Qwen/Qwen3-0.6B from the Hub or HF_HOME's cache)
#   DATA_GRPO, DATA_DPO   folders with train.jsonl/test.jsonl instead of the Hub (air-gapped machines)
#   NUM_GPUS   GPUs for the accelerate DDP run      (default: what nvidia-smi lists)
#   RL4LLM     the CLI                              (default: .venv/bin/rl4llm)
#   ALLOW_DOWNLOADS=1   the same as --allow-downloads
# Air-gapped: download once with network access (HF_HOME=/shared/hf ... --allow-downloads), then run with
# HF_HOME=/shared/hf.
set -euo pipefail
cd "$(dirname "$0")/../.."
ALLOW_DOWNLOADS=${ALLOW_DOWNLOADS:-0}
if [ "${1:-}" = "--allow-downloads" ]; then ALLOW_DOWNLOADS=1; shift; fi
OUT=${1:-runs/gpu-check}
if [ "$ALLOW_DOWNLOADS" = 1 ]; then
  unset HF_HUB_OFFLINE
  OFFLINE_HINT="preflight failed: see its lines above"
  echo "== downloads allowed: what is not in the cache (${HF_HOME:-~/.cache/huggingface}) is fetched"
else
  export HF_HUB_OFFLINE=1
  OFFLINE_HINT="nothing may be downloaded: put the model and data sets in the cache, pass MODEL / DATA_GRPO / DATA_DPO, or rerun with --allow-downloads"
  echo "== offline (HF_HUB_OFFLINE=1): the cache (${HF_HOME:-~/.cache/huggingface}), MODEL, DATA_GRPO and DATA_DPO only"
fi
VERIFIER=${VERIFIER:-solutions/module_09/module_9_reference.py}
LOSS=${LOSS:-solutions/module_08/module_8_training.py}
RL4LLM_BIN=${RL4LLM:-.venv/bin/rl4llm}
PYTHON=${PYTHON:-.venv/bin/python}
NUM_GPUS=${NUM_GPUS:-$(nvidia-smi -L 2>/dev/null | wc -l)}
MODEL_ARGS=(); [ -n "${MODEL:-}" ] && MODEL_ARGS=(--model "$MODEL")
GRPO_DATA=(); [ -n "${DATA_GRPO:-}" ] && GRPO_DATA=(--data-dir "$DATA_GRPO")
DPO_DATA=(); [ -n "${DATA_DPO:-}" ] && DPO_DATA=(--data-dir "$DATA_DPO")
rl4llm() { "$RL4LLM_BIN" "$@"; }
mkdir -p "$OUT"

echo "== 1. preflight (exits non-zero when a run cannot work)"
rl4llm capstone preflight --algo grpo --profile full "${MODEL_ARGS[@]}" "${GRPO_DATA[@]}" || { echo "$OFFLINE_HINT" >&2; exit 1; }
rl4llm capstone preflight --algo dpo --profile full "${MODEL_ARGS[@]}" "${DPO_DATA[@]}" || { echo "$OFFLINE_HINT" >&2; exit 1; }

echo "== 2. smoke runs (2 steps each)"
rl4llm capstone run --algo grpo --profile smoke --out "$OUT/grpo-smoke" --verifier "$VERIFIER" "${MODEL_ARGS[@]}" "${GRPO_DATA[@]}"
rl4llm capstone run --algo dpo --profile smoke --out "$OUT/dpo-smoke" --loss "$LOSS" "${MODEL_ARGS[@]}" "${DPO_DATA[@]}"

echo "== 3. do the completions fit? (thinking off, max_completion_length of the profile)"
"$PYTHON" - "$OUT/grpo-smoke/passport.json" <<'PY'
import json, sys
from graders.capstone.run.profiles import MAX_CLIPPED_RATIO
passport = json.load(open(sys.argv[1]))
ratios = [e["completions/clipped_ratio"] for e in passport["log_history"] if e.get("completions/clipped_ratio") is not None]
mean = sum(ratios) / len(ratios)
limit = passport["trainer_args"]["max_completion_length"]
print(f"clipped ratio over the smoke run: {mean:.2f} at max_completion_length={limit} (limit {MAX_CLIPPED_RATIO})")
print(f"greedy completions cut after training: {passport['metrics']['after']['truncated_fraction']:.2f}")
print(f"data kept: {passport['data']['filter']['train']}")
sys.exit(0 if mean <= MAX_CLIPPED_RATIO else 1)
PY

echo "== 4. full runs, graded as submissions (the verifier or the loss beside the run folder)"
rl4llm capstone run --algo grpo --profile full --out "$OUT/grpo-full" --verifier "$VERIFIER" "${MODEL_ARGS[@]}" "${GRPO_DATA[@]}"
cp "$VERIFIER" "$OUT/grpo-full/module_9_reference.py"
rl4llm capstone grade "$OUT/grpo-full" --out "$OUT/grades/grpo-full" "${MODEL_ARGS[@]}" "${GRPO_DATA[@]}"
rl4llm capstone run --algo dpo --profile full --out "$OUT/dpo-full" --loss "$LOSS" "${MODEL_ARGS[@]}" "${DPO_DATA[@]}"
cp "$LOSS" "$OUT/dpo-full/module_8_training.py"
rl4llm capstone grade "$OUT/dpo-full" --out "$OUT/grades/dpo-full" "${MODEL_ARGS[@]}" "${DPO_DATA[@]}"

if [ "$NUM_GPUS" -ge 2 ]; then
  echo "== 5. data-parallel smoke run on $NUM_GPUS GPUs (accelerate, DDP)"
  "$PYTHON" -m accelerate.commands.launch --config_file assignments/capstone/accelerate/ddp.yaml --num_processes "$NUM_GPUS" -m graders.cli capstone run --algo grpo --profile smoke --out "$OUT/grpo-ddp" --verifier "$VERIFIER" "${MODEL_ARGS[@]}" "${GRPO_DATA[@]}"
fi
echo "== done: passports, adapters, figures and grades are under $OUT"
