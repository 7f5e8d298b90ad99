#!/usr/bin/env bash
# Installs the Debian packages kiln's build, tests and examples need.
#
# As root: `apt-get update` once, then `apt-get install -y` the missing ones.
# As another user: prints what is missing and exits 1 (run it with sudo, or
# install them yourself). Exits 0 at once when nothing is missing.
#
# Add a package here when the project starts to need it.
set -euo pipefail

KILN_DEB_PACKAGES=(
    cmake
    gcc
    g++
    make
    pkg-config
    libstb-dev # stb_image_write for the png winsys and the golden images
    libx11-dev # the X11 window target
    libxext-dev # MIT-SHM for the X11 target
    xvfb # a real X server for the X11 target's tests
    x11-apps # xwd, to capture a window in tests
    libosmesa6-dev # the osmesa backend: Mesa's llvmpipe through OSMesa
    libegl-dev # ... or through surfaceless EGL (Mesa 25.1 on has only this)
    libgl-dev # GL/glcorearb.h, the GL function types src/gl loads by name
    libgl1-mesa-dri # swrast_dri.so: llvmpipe for surfaceless EGL
    clang # the capture fuzzer (scripts/fuzz.sh): libFuzzer ...
    libclang-rt-dev # ... whose runtime is here, with ASan and UBSan
)

if ! command -v dpkg >/dev/null 2>&1; then
    echo "deps.sh: no dpkg: not a Debian-based system, so nothing is checked." >&2
    echo "deps.sh: make sure these (or their equivalents) are installed: ${KILN_DEB_PACKAGES[*]}" >&2
    exit 0
fi

installed() {
    # dpkg -s also succeeds for a removed package whose config files remain,
    # so read the status line.
    dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed$'
}

missing=()
for pkg in "${KILN_DEB_PACKAGES[@]}"; do
    installed "$pkg" || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "deps.sh: all ${#KILN_DEB_PACKAGES[@]} packages present"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "deps.sh: missing Debian packages: ${missing[*]}" >&2
    echo "deps.sh: not root, so not installing them; run:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi

echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"

still=()
for pkg in "${missing[@]}"; do
    installed "$pkg" || still+=("$pkg")
done
if [ ${#still[@]} -ne 0 ]; then
    echo "deps.sh: still missing after apt-get install: ${still[*]}" >&2
    exit 1
fi
echo "deps.sh: installed ${missing[*]}"
