#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed for the dashboard's browser
# tests (pkg/testenv.MustBrowser, through chromedp): installs it with
# apt-get when missing. Safe to run any number of times.
set -euo pipefail

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
printf 'ensure-chromium: installing chromium\n' >&2
as_root apt-get update -qq
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
