#!/usr/bin/env bash
# Run the Gradescope bundle the way Gradescope does, in a fresh Debian root filesystem, and print what it gave.
#
#   sudo bash examples/gradescope/container.sh [--module 8|9] [--lang en|ru] [--work DIR] [--record FILE]
#                                              [--python PY]   (default: the checkout's .venv/bin/python)
#
# Run from the kit's checkout, as root, on a Debian/Ubuntu machine. It
#   1. builds the bundle (.venv/bin/rl4llm gradescope --out ... --module ... --lang ...);
#   2. builds a Debian bookworm root filesystem with debootstrap (minbase + python3, python3-venv,
#      ca-certificates; cached in $WORK/base, copied fresh to $WORK/rootfs for each run of this script);
#   3. unzips the bundle into /autograder/source and copies run_autograder to /autograder, as Gradescope does;
#   4. runs setup.sh in the container (torch from this machine's local wheel, RL4LLM_TORCH_WHEEL; the rest
#      from PyPI and Debian's mirror), then run_autograder on three submissions: the kit's solutions
#      (correct), the typical-mistakes example (partial) and a hostile one (tests/hostile_code.py:
#      reads the bundled solutions, forges results.json);
#   5. prints (and, with --record, appends to FILE) the sandbox layers `rl4llm doctor` reported inside the
#      container, the time of setup.sh and of each run_autograder, and each score.
#
# The container is bubblewrap (Debian's `bubblewrap`, `bwrap`): run as root it enters the root filesystem by
# pivot_root (not chroot, under which the kernel refuses the user namespaces the kit's workers make), in its
# own mount, PID, IPC and UTS namespaces, with the host's network (setup.sh downloads), /sys read-only, a
# fresh /dev and /proc, as root with Docker's default capability set as its effective set (Gradescope's
# containers are Docker's; bwrap leaves the bounding set whole). It does not reproduce Docker's seccomp profile, which refuses unshare(CLONE_NEWUSER) and mount:
# on Gradescope expect fewer layers than this prints (docs/security.md, "In a Gradescope or Docker container").
set -euo pipefail

MODULE=""
LANGUAGE=en
WORK=/var/tmp/rl4llm-gradescope
RECORD=""
MIRROR=http://deb.debian.org/debian
PY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --module) MODULE="$2"; shift 2 ;;
    --lang) LANGUAGE="$2"; shift 2 ;;
    --work) WORK="$2"; shift 2 ;;
    --record) RECORD="$2"; shift 2 ;;
    --python) PY="$2"; shift 2 ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "container.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "container.sh: run as root (debootstrap and bwrap need it)" >&2; exit 2; }
KIT="$(cd "$(dirname "$0")/../.." && pwd)"
PY="${PY:-$KIT/.venv/bin/python}"
for tool in debootstrap bwrap unzip; do
  command -v "$tool" >/dev/null || { echo "container.sh: $tool is missing: apt-get install debootstrap bubblewrap unzip" >&2; exit 2; }
done

# the torch wheel: where `pip install torch==2.13.0` finds it on this machine (pip's find-links), else downloaded once
WHEELS="$WORK/wheels"
mkdir -p "$WHEELS"
if ! ls "$WHEELS"/torch-2.13.0*.whl >/dev/null 2>&1; then
  "$PY" -m pip download torch==2.13.0 --no-deps -d "$WHEELS" -q
fi
WHEEL="$(ls "$WHEELS"/torch-2.13.0*.whl | head -n 1)"

# 1. the bundle
BUNDLE="$WORK/autograder.zip"
MODULE_ARGS=()
[ -n "$MODULE" ] && MODULE_ARGS=(--module "$MODULE")
(cd "$KIT" && "$PY" -m graders.cli gradescope --out "$BUNDLE" "${MODULE_ARGS[@]}" --lang "$LANGUAGE")

# 2. the root filesystem
if [ ! -d "$WORK/base" ]; then
  rm -rf "$WORK/base.tmp"
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$WORK/base.tmp" "$MIRROR"
  mv "$WORK/base.tmp" "$WORK/base"
fi
ROOTFS="$WORK/rootfs"
rm -rf "$ROOTFS"
cp -a "$WORK/base" "$ROOTFS"
cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
mkdir -p "$ROOTFS/var/tmp/wheels" && cp "$WHEEL" "$ROOTFS/var/tmp/wheels/"
# this machine's certificate authorities, for pip only (PIP_CERT): where a proxy re-signs PyPI's certificate,
# the container's own ca-certificates cannot check it; on Gradescope pip uses the image's own
HOST_CA=/etc/ssl/certs/ca-certificates.crt
CERT_ENV=()
if [ -s "$HOST_CA" ]; then cp "$HOST_CA" "$ROOTFS/var/tmp/host-ca.crt"; CERT_ENV=(PIP_CERT=/var/tmp/host-ca.crt); fi

# 3. /autograder as Gradescope lays it out
mkdir -p "$ROOTFS/autograder/source" "$ROOTFS/autograder/results" "$ROOTFS/autograder/submission"
unzip -q "$BUNDLE" -d "$ROOTFS/autograder/source"
cp "$ROOTFS/autograder/source/run_autograder" "$ROOTFS/autograder/run_autograder"

# the three submissions, built from the kit on the host
SUBS="$WORK/submissions"
rm -rf "$SUBS" && mkdir -p "$SUBS/hostile"
MODULES="${MODULE:-8 9}"
(cd "$KIT" && "$PY" - "$SUBS" $MODULES <<'PY'
import sys
from pathlib import Path
sys.path.insert(0, "tests")
from graders import course
from graders.engine.routes.demo import assemble_examples
from hostile_code import gradescope_cheat

target, modules = Path(sys.argv[1]), tuple(course.module(m).number for m in sys.argv[2:])
assemble_examples(target, modules=modules)
for name, text in gradescope_cheat("/autograder", modules).items():
    (target / "hostile" / name).write_text(text)
PY
)

CAPS=(--cap-drop ALL)
for cap in CHOWN DAC_OVERRIDE FSETID FOWNER MKNOD NET_RAW SETGID SETUID SETFCAP SETPCAP NET_BIND_SERVICE \
           SYS_CHROOT KILL AUDIT_WRITE; do   # Docker's default capabilities
  CAPS+=(--cap-add "CAP_$cap")
done
in_container() {
  env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"
}
container() {
  in_container bwrap --bind "$ROOTFS" / --dev /dev --proc /proc --ro-bind /sys /sys \
    --unshare-pid --unshare-ipc --unshare-uts --hostname gradescope --die-with-parent "${CAPS[@]}" \
    --chdir /autograder "$@"
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

LOG="$WORK/log"
rm -rf "$LOG" && mkdir -p "$LOG"   # no score of an earlier run is ever reported
REPORT="$WORK/report.txt"
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); host kernel $(uname -r); container: bubblewrap $(bwrap --version | cut -d' ' -f2), Debian bookworm (debootstrap minbase), python3 $(chroot "$ROOTFS" python3 -c 'import platform; print(platform.python_version())')"
  echo "bundle: rl4llm gradescope ${MODULE_ARGS[*]:-(both modules)} --lang $LANGUAGE"
} > "$REPORT"

# 4. setup.sh (as Gradescope runs it when it builds the image)
start=$(now)
container env "${CERT_ENV[@]}" RL4LLM_TORCH_WHEEL="/var/tmp/wheels/$(basename "$WHEEL")" \
  bash /autograder/source/setup.sh \
  > "$LOG/setup.log" 2>&1 || { echo "setup.sh failed; see $LOG/setup.log" >&2; tail -n 30 "$LOG/setup.log" >&2; exit 1; }
echo "setup.sh: $(elapsed "$start" "$(now)") s ($(tail -n 1 "$LOG/setup.log"))" >> "$REPORT"

for name in correct typical_mistakes hostile; do
  rm -rf "$ROOTFS/autograder/submission" "$ROOTFS/autograder/results"
  mkdir -p "$ROOTFS/autograder/results"
  cp -r "$SUBS/$name" "$ROOTFS/autograder/submission"
  start=$(now)
  status=0
  container /autograder/run_autograder > "$LOG/$name.log" 2>&1 || status=$?
  took=$(elapsed "$start" "$(now)")
  cp "$ROOTFS/autograder/results/results.json" "$LOG/$name.results.json" 2>/dev/null || true
  if [ "$name" = correct ]; then
    echo "sandbox layers (rl4llm doctor inside the container):" >> "$REPORT"
    sed -n '/^sandbox layers/,/^every layer\|^missing/p' "$LOG/$name.log" >> "$REPORT"
  fi
  score=$(python3 - "$LOG/$name.results.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as error:
    print(f"no results.json ({error})")
else:
    tests = r.get("tests", [])
    passed = sum(t.get("status") == "passed" for t in tests)
    print(f"{r['score']:g} / {r.get('extra_data', {}).get('max_score', '?')}, {passed} of {len(tests)} tests passed")
PY
)
  forged=""
  [ -e "$ROOTFS/autograder/results/forged" ] && forged=" FORGED: the submission wrote into /autograder/results"
  echo "run_autograder $name: ${took} s, exit $status, score $score$forged" >> "$REPORT"
done

cat "$REPORT"
[ -n "$RECORD" ] && cat "$REPORT" >> "$RECORD"
echo "logs: $LOG/ (setup.log, <submission>.log, <submission>.results.json)"
