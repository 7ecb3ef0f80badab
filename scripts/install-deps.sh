#!/usr/bin/env bash
# Installs what the CPU-only test run needs beyond the machine's toolchain
# (CMake, Ninja, nvcc, GoogleTest, Python 3): matplotlib for Debian's python3,
# which `scripts/suite.py plot` uses. Does nothing when it is already there.
set -euo pipefail
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "install-deps: no apt-get here; install matplotlib for /usr/bin/python3 by hand" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends python3-matplotlib >/dev/null
/usr/bin/python3 -c 'import matplotlib; print("install-deps: matplotlib", matplotlib.__version__)'
