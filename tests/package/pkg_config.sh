#!/usr/bin/env bash
# pkg_config.sh BUILD_DIR PREFIX WORK CONSUMER_MAIN_C CC CONFIG [EXTRA_FLAGS]
#
# Installs the kiln build into PREFIX and compiles the consumer with
#   cc main.c $(pkg-config --cflags --libs kiln)
# using PKG_CONFIG_PATH into PREFIX, then runs it; then links it against
# the static library with `pkg-config --static --libs` (which proves
# Libs.private is complete) and runs that too. EXTRA_FLAGS carries the
# sanitizer flags of a sanitizer build.
#
# CMAKE in the environment names the cmake to install with (default: cmake).
# Exits 77 (ctest SKIP_RETURN_CODE) only when there is no pkg-config binary
# and it cannot be installed (not root, or no apt-get).
set -euo pipefail

build=$1 prefix=$2 work=$3 main_c=$4 cc=$5 config=${6:-} extra=${7:-}

if ! command -v pkg-config >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "pkg_config.sh: pkg-config missing; installing it"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y --no-install-recommends pkg-config >/dev/null 2>&1 ||
            { apt-get update >/dev/null && apt-get install -y --no-install-recommends pkg-config >/dev/null; } ||
            true
    fi
    if ! command -v pkg-config >/dev/null 2>&1; then
        echo "SKIP: no pkg-config binary (install it: apt-get install pkg-config)"
        exit 77
    fi
fi

rm -rf "$prefix" "$work"
mkdir -p "$work"
install_args=(--install "$build" --prefix "$prefix")
[ -n "$config" ] && install_args+=(--config "$config")
"${CMAKE:-cmake}" "${install_args[@]}" >"$work/install.log"

pc=$(find "$prefix" -name kiln.pc -print -quit)
if [ -z "$pc" ]; then
    echo "FAIL: no kiln.pc installed under $prefix" >&2
    exit 1
fi
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
echo "kiln.pc: $pc"
echo "pkg-config --cflags --libs kiln: $(pkg-config --cflags --libs kiln)"
echo "pkg-config --static --libs kiln: $(pkg-config --static --libs kiln)"

includedir=$(pkg-config --variable=includedir kiln)
libdir=$(pkg-config --variable=libdir kiln)
[ -f "$includedir/kiln.h" ] || { echo "FAIL: includedir '$includedir' has no kiln.h" >&2; exit 1; }
[ -f "$libdir/libkiln.a" ] || { echo "FAIL: libdir '$libdir' has no libkiln.a" >&2; exit 1; }

strict=(-std=c11 -Wall -Wextra -pedantic -Werror)
# shellcheck disable=SC2046,SC2086 # pkg-config output and EXTRA_FLAGS are word lists
{
    "$cc" $extra "${strict[@]}" "$main_c" $(pkg-config --cflags --libs kiln) \
        -Wl,-rpath,"$libdir" -o "$work/consumer_pc"
    "$work/consumer_pc"

    static_libs=$(pkg-config --static --libs kiln | sed 's/-lkiln\b/-l:libkiln.a/')
    "$cc" $extra "${strict[@]}" "$main_c" $(pkg-config --cflags kiln) $static_libs \
        -o "$work/consumer_pc_static"
    "$work/consumer_pc_static"
}
echo "package_pkg_config: built and ran the consumer with pkg-config (shared and static)"
