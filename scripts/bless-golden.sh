#!/usr/bin/env bash
# Re-blesses the golden images and captures: scripts/bless-golden.sh
#
# Builds kiln_demo, test_golden and test_capture_files (the default preset
# in build/default, or the build directory KILN_BUILD_DIR names, configured
# if needed), renders every draw scene with
#   kiln_demo --golden --serial
# (the size and frame count test_golden uses: scenes.h, DEMO_GOLDEN_*),
# replaces tests/golden/*.png with the new set; then records every example
# scene with
#   test_capture_files --bless DIR
# (small captures, the size and frames in test_capture_files.c) and replaces
# tests/captures/*.kcap and their live images tests/golden/capture/*.png;
# then runs test_golden and test_capture_files to show that the tree now
# passes them. Run it only after looking at the diff images a failing
# test_golden wrote (golden-out/ in the build directory), or at why a
# checked-in capture no longer replays (a capture format change must bump
# its version: docs/capture.md), and deciding that the new files are right;
# commit them with the change that made them differ. See docs/golden.md.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${KILN_JOBS:-2}

bash scripts/deps.sh
if [ -n "${KILN_BUILD_DIR:-}" ]; then
    build=$KILN_BUILD_DIR
    cmake -S . -B "$build"
else
    build=build/default
    cmake --preset default
fi
cmake --build "$build" -j"$jobs" --target kiln_demo test_golden test_capture_files

demo=$build/examples/kiln_demo
if [ ! -x "$demo" ]; then
    echo "bless-golden.sh: $demo was not built (is libstb-dev installed?)" >&2
    exit 1
fi

# Rendered aside first, so a failing run leaves tests/golden as it was and
# a scene that no longer exists loses its image.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$demo" --golden --serial --out "$tmp"
mkdir -p tests/golden
rm -f tests/golden/*.png
cp "$tmp"/*.png tests/golden/

# The checked-in captures, likewise recorded aside first.
mkdir "$tmp/capture"
"$build/tests/test_capture_files" --bless "$tmp/capture"
mkdir -p tests/captures tests/golden/capture
rm -f tests/captures/*.kcap tests/golden/capture/*.png
cp "$tmp"/capture/*.kcap tests/captures/
cp "$tmp"/capture/*.png tests/golden/capture/

echo
echo "bless-golden.sh: golden images and captures:"
for f in tests/golden/*.png tests/captures/*.kcap tests/golden/capture/*.png; do
    printf '  %8d bytes  %s\n' "$(stat -c %s "$f")" "$f"
done
if command -v git >/dev/null 2>&1 && git rev-parse --git-dir >/dev/null 2>&1; then
    echo "bless-golden.sh: changed (git status):"
    git status --short -- tests/golden tests/captures | sed 's/^/  /'
fi

echo
ctest --test-dir "$build" -R '^(test_golden|test_capture_files)$' --output-on-failure
