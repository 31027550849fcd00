#!/usr/bin/env bash
# The README's pictures of the web page: runs the browser test
# (TestBrowserClickThrough, Debian's Chromium driven by chromedp), which
# saves memories.png, memory.png, log.png and graph.png, each checked to be
# a PNG under 300 KB, into docs/ui/.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y -qq chromium >/dev/null
  else
    echo "needs Debian's Chromium: sudo apt-get install chromium" >&2
    exit 1
  fi
fi
MINDMOUNT_UI_SHOTS="$PWD/docs/ui" go test ./serve/webui/ -run '^TestBrowserClickThrough$' -count=1
ls -l docs/ui/*.png
