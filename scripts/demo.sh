#!/usr/bin/env bash
# Renders the example scenes into PNG files: scripts/demo.sh [kiln_demo args]
#
# Installs missing packages (scripts/deps.sh), configures and builds the
# default preset (build/default), runs
#   build/default/examples/kiln_demo --out out/
# from the repository root and lists the PNG files it wrote. Extra
# arguments go to kiln_demo.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${KILN_JOBS:-2}

bash scripts/deps.sh
cmake --preset default
cmake --build --preset default -j"$jobs" --target kiln_demo

demo=build/default/examples/kiln_demo
if [ ! -x "$demo" ]; then
    echo "demo.sh: $demo was not built (is examples/ there and KILN_BUILD_EXAMPLES on?)" >&2
    exit 1
fi

mkdir -p out
stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT
"$demo" --out out/ "$@"

echo
echo "demo.sh: PNG files written to out/:"
n=0
while IFS= read -r png; do
    printf '  %8d bytes  %s\n' "$(stat -c %s "$png")" "$png"
    n=$((n + 1))
done < <(find out -name '*.png' -newer "$stamp" | sort)
if [ "$n" -eq 0 ]; then
    echo "demo.sh: kiln_demo wrote no PNG files" >&2
    exit 1
fi
echo "demo.sh: $n PNG files"
