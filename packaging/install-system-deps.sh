#!/usr/bin/env bash
# Installs the Debian packages Qt's xcb platform plugin, OpenGL and Xvfb need (and xdotool, with which a
# test presses real keys), when any is missing.
# Needs root (or passwordless sudo) only when something is actually missing.
set -euo pipefail
pkgs=(xvfb xauth x11-utils libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0
      libxcb-xkb1 libxkbcommon-x11-0 libxcb-shape0 libxcb-randr0 libxcb-xinerama0 libgl1 libegl1
      libgl1-mesa-dri libfontconfig1 libdbus-1-3 libglib2.0-0 xdotool)
command -v dpkg-query >/dev/null || { echo "install-system-deps: not a Debian system; install Xvfb and Qt's xcb libraries yourself" >&2; exit 0; }
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-system-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
