#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) in a separate clang build with ASan + UBSan and runs each
# for a bounded time. Fails on any finding, printing the command that reproduces it.
#
#   scripts/fuzz.sh [--seconds N] [--target fuzz_NAME]... [--build-only]
#
#   --seconds N   run each target N seconds (default 60)
#   --target T    run only T (repeatable); default: every tests/fuzz/fuzz_*.cpp
#   --build-only  configure and build, run nothing
#
# Build dir: $WB_FUZZ_BUILD_DIR or build-fuzz/ (engine + fuzz targets only: no Qt, no Qt Test executables).
# Corpora grow in <build>/fuzz-corpus/<target> between runs, seeded from the test fixtures by
# tests/fuzz/make_seeds.py; findings land in <build>/fuzz-findings/<target>/, logs in <build>/fuzz-logs/.
# Afterwards CTest runs each target once over its seeds and over tests/fuzz/regressions/<target>/.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${WB_FUZZ_BUILD_DIR:-$here/build-fuzz}"
seconds=60
build_only=0
targets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --target) targets+=("$2"); shift 2 ;;
    --build-only) build_only=1; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [[ ${#targets[@]} -eq 0 ]]; then
  for src in "$here"/tests/fuzz/fuzz_*.cpp; do
    name="$(basename "$src" .cpp)"
    [[ "$name" == fuzz_common ]] || targets+=("$name")
  done
fi

# Longest input per target: room for the largest seed of its format, small enough to stay fast.
max_len_of() {
  case "$1" in
    fuzz_tokenizer) echo 32768 ;;
    fuzz_http_request) echo 40000 ;;  # past the 32 KiB head limit
    fuzz_gguf|fuzz_model_load) echo 16384 ;;
    fuzz_chat_template) echo 8192 ;;
    fuzz_llmc) echo 4096 ;;
    *) echo 8192 ;;
  esac
}

launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" \
  -DWB_WITH_CUDA=OFF -DWB_WITH_QT=OFF -DBUILD_TESTING=OFF -DWB_FUZZ=ON > /dev/null
# A target the build does not define (fuzz_openai_request without Qt6 Core) is skipped, saying so.
known="$(ninja -C "$build" -t targets all | sed -n 's/^\(fuzz_[a-z_0-9]*\): .*/\1/p')"
defined=()
for t in "${targets[@]}"; do
  if grep -qx "$t" <<< "$known"; then defined+=("$t"); else echo "fuzz.sh: $t is not built here (see tests/fuzz/CMakeLists.txt), skipped"; fi
done
targets=("${defined[@]}")
ninja -C "$build" "${targets[@]}"
[[ $build_only -eq 1 ]] && exit 0

python3 "$here/tests/fuzz/make_seeds.py" "$build/fuzz-seeds"
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=()
for t in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$t" findings="$build/fuzz-findings/$t" log="$build/fuzz-logs/$t.log"
  mkdir -p "$corpus" "$findings" "$(dirname "$log")" "$build/fuzz-seeds/$t"
  bin="$build/tests/fuzz/$t"
  dict=()
  [[ -f "$here/tests/fuzz/$t.dict" ]] && dict=(-dict="$here/tests/fuzz/$t.dict")
  echo "== $t: ${seconds}s"
  touch "$findings/.started"
  if "$bin" -max_len="$(max_len_of "$t")" -timeout=10 -rss_limit_mb=2048 -max_total_time="$seconds" \
       -print_final_stats=1 -artifact_prefix="$findings/" "${dict[@]}" "$corpus" "$build/fuzz-seeds/$t" \
       > "$log" 2>&1; then
    grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || tail -3 "$log"
  else
    failed+=("$t")
    grep -E 'ERROR|SUMMARY|runtime error|deadly signal|Test unit written' "$log" | head -8 || true
    find "$findings" -type f -newer "$findings/.started" ! -name .started | while read -r f; do
      echo "   reproduce: $bin $f"
    done
    echo "   log: $log"
  fi
done

echo "== seed corpora and regression inputs, each run once (ctest)"
# Only the targets built here (with --target, the others may not exist in this build).
only="^(fuzz_make_seeds$|($(IFS='|'; echo "${targets[*]}"))_)"
(cd "$build" && ctest --output-on-failure -R "$only") || failed+=(ctest)

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: no findings"
