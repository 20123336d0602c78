#!/usr/bin/env bash
# Every window's screenshots for docs/images: on a 1366x768 laptop screen (every tab; README's images), and
# on 1920x1080 at QT_SCALE_FACTOR=1.5 (the first tab of each window, *-1.5x.png). Needs xvfb-run.
#   docs/make_all_screenshots.sh [PYTHON]
set -euo pipefail
cd "$(dirname "$0")/.."
py=${1:-.venv/bin/python}
small=(-a -s "-screen 0 1366x768x24")
scaled=(-a -s "-screen 0 1920x1080x24")
xvfb-run "${small[@]}" "$py" docs/make_screenshots.py docs/images
xvfb-run "${small[@]}" "$py" docs/make_sim_screenshot.py docs/images/simulation.png
xvfb-run "${small[@]}" "$py" docs/make_world_screenshots.py docs/images
QT_SCALE_FACTOR=1.5 xvfb-run "${scaled[@]}" "$py" docs/make_screenshots.py docs/images --suffix=-1.5x --first
QT_SCALE_FACTOR=1.5 xvfb-run "${scaled[@]}" "$py" docs/make_sim_screenshot.py docs/images/simulation-1.5x.png
