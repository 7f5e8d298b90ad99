#!/usr/bin/env bash
# The whole test suite, in three builds: scripts/test.sh [PRESET...]
#
# For each preset (default: default, then tsan, then asan, then fuzz; see
# CMakePresets.json) it configures, builds with -j2 and runs
#   ctest --preset PRESET --output-on-failure -j2
# stopping at the first failure. The fuzz preset is scripts/fuzz.sh: the
# capture fuzzer (clang, libFuzzer, ASan + UBSan) for 200,000 executions,
# counted as one test. The last line is a summary,
#   "summary: N passed, M failed"
# counted over the presets that ran. KILN_JOBS overrides the 2.
#
# ThreadSanitizer cannot start on kernels that randomize mmap with more
# bits than it expects ("FATAL: ThreadSanitizer: unexpected memory
# mapping"). Before the tsan tests, a trivial TSan program is run; if it
# fails that way, ctest runs under `setarch $(uname -m) -R` (no address
# randomization for it and its children), and if that is not enough and we
# are root with vm.mmap_rnd_bits > 28, we lower it with
# `sysctl -w vm.mmap_rnd_bits=28` (a system-wide setting; said loudly).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
jobs=${KILN_JOBS:-2}
if [ $# -gt 0 ]; then
    presets=("$@")
else
    presets=(default tsan asan fuzz)
fi

start=$SECONDS
total_passed=0
total_failed=0
done_presets=()

summary() {
    echo "test.sh: presets run: ${done_presets[*]:-none}; $((SECONDS - start)) s"
    echo "summary: ${total_passed} passed, ${total_failed} failed"
}

fail() {
    echo "test.sh: FAILED: $*" >&2
    [ "$total_failed" -gt 0 ] || total_failed=1
    summary
    exit 1
}

probe_dir=
trap '[ -z "$probe_dir" ] || rm -rf "$probe_dir"' EXIT

# Sets tsan_wrap to the command prefix TSan programs need here (maybe none).
tsan_wrap=()
tsan_probe() {
    local dir out
    dir=$(mktemp -d)
    probe_dir=$dir
    cat >"$dir/probe.c" <<'PROBE'
#include <pthread.h>
static int shared;
static void *run(void *arg) { (void)arg; shared = 1; return 0; }
int main(void)
{
    pthread_t t;
    if (pthread_create(&t, 0, run, 0) != 0)
        return 1;
    pthread_join(t, 0);
    return shared == 1 ? 0 : 1;
}
PROBE
    "${CC:-cc}" -fsanitize=thread -g -O1 -pthread "$dir/probe.c" -o "$dir/probe" ||
        fail "cannot compile a ThreadSanitizer program (${CC:-cc} -fsanitize=thread)"

    if out=$("$dir/probe" 2>&1); then
        echo "test.sh: ThreadSanitizer runs as is"
        return 0
    fi
    if ! grep -q "unexpected memory mapping" <<<"$out"; then
        echo "$out" >&2
        fail "a trivial ThreadSanitizer program fails (see above)"
    fi
    echo "test.sh: ThreadSanitizer: unexpected memory mapping; trying setarch -R"
    local arch
    arch=$(uname -m)
    if out=$(setarch "$arch" -R "$dir/probe" 2>&1); then
        echo "test.sh: tsan tests run under 'setarch $arch -R'"
        tsan_wrap=(setarch "$arch" -R)
        return 0
    fi
    local bits
    bits=$(sysctl -n vm.mmap_rnd_bits 2>/dev/null || echo 0)
    if [ "$bits" -gt 28 ] && [ "$(id -u)" -eq 0 ]; then
        echo "test.sh: WARNING: lowering vm.mmap_rnd_bits from $bits to 28 for ThreadSanitizer" \
            "(system-wide; restore with: sysctl -w vm.mmap_rnd_bits=$bits)"
        sysctl -w vm.mmap_rnd_bits=28 >/dev/null
        if out=$("$dir/probe" 2>&1); then
            return 0
        fi
    fi
    echo "$out" >&2
    fail "ThreadSanitizer cannot run here (vm.mmap_rnd_bits=$bits; try as root:" \
        "sysctl -w vm.mmap_rnd_bits=28)"
}

bash scripts/deps.sh || fail "scripts/deps.sh (missing packages)"

for preset in "${presets[@]}"; do
    if [ "$preset" = fuzz ]; then
        echo
        bash scripts/fuzz.sh || { total_failed=$((total_failed + 1)); fail "fuzz: scripts/fuzz.sh"; }
        total_passed=$((total_passed + 1))
        done_presets+=(fuzz)
        continue
    fi
    echo
    echo "=== $preset: configure"
    cmake --preset "$preset" || fail "$preset: configure"
    echo "=== $preset: build"
    cmake --build --preset "$preset" -j"$jobs" || fail "$preset: build"

    wrap=()
    if [ "$preset" = tsan ]; then
        tsan_probe
        wrap=("${tsan_wrap[@]}")
    fi
    echo "=== $preset: test"
    log="$root/build/$preset/test.sh-ctest.log"
    set +e
    ${wrap[@]+"${wrap[@]}"} ctest --preset "$preset" --output-on-failure -j"$jobs" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    set -e
    # "100% tests passed, 0 tests failed out of 42"
    line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1 || true)
    if [ -n "$line" ]; then
        failed=$(sed -E 's/.* ([0-9]+) tests? failed out of.*/\1/' <<<"$line")
        all=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
        total_passed=$((total_passed + all - failed))
        total_failed=$((total_failed + failed))
    fi
    done_presets+=("$preset")
    [ "$rc" -eq 0 ] || fail "$preset: ctest exited $rc"
done

echo
echo "test.sh: all passed"
summary
