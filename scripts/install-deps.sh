#!/usr/bin/env bash
# Installs the OPTIONAL extras of the CPU-only test run, beyond the machine's toolchain (CMake,
# Ninja, nvcc, GoogleTest, Python 3):
#   - matplotlib for the python3 that runs the tests (`scripts/suite.py plot`; without it the plot
#     tests report "skipped" with the reason),
#   - the pinned npm packages that decode Compiler Explorer links in the tests (scripts/node/install.sh;
#     without node those tests report "skipped").
# It never fails the test command: where apt-get, sudo or the network is missing it says what was
# not installed and which tests will be skipped, and exits 0.
set -uo pipefail
cd "$(dirname "$0")/.."
python=$(command -v python3 || echo /usr/bin/python3)

say_which_python() {
  # One line: which interpreter plots. CMake runs the tests with the python3 it finds, or with
  # /usr/bin/python3 where only that one has matplotlib (CMakeLists.txt); by hand, use the same.
  if [ "$1" = "$python" ]; then
    echo "install-deps: matplotlib is there for $1 (the python3 on PATH): 'python3 scripts/suite.py plot ...' works"
  else
    echo "install-deps: matplotlib is there for $1, not for the python3 on PATH ($python): the tests use $1;" \
         "plot by hand with '$1 scripts/suite.py plot ...'"
  fi
}

install_matplotlib() {
  # CMake runs the tests with the first of python3 and /usr/bin/python3 that has matplotlib.
  local candidate
  for candidate in ${INSTALL_DEPS_PYTHONS:-"$python" /usr/bin/python3}; do
    if [ -x "$candidate" ] && "$candidate" -c 'import matplotlib' 2>/dev/null; then
      say_which_python "$candidate"
      return 0
    fi
  done
  local on_path=$python
  python=/usr/bin/python3  # where Debian's python3-matplotlib goes
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: no apt-get here: matplotlib not installed; the plot tests will be skipped" \
         "(install it with 'pip install matplotlib' for $python to run them)" >&2
    return 0
  fi
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo="sudo -n"
    else
      echo "install-deps: not root and no password-less sudo: matplotlib not installed; the plot tests" \
           "will be skipped" >&2
      return 0
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  local limit=""
  command -v timeout >/dev/null 2>&1 && limit="timeout 150"  # no network must not eat CI's time
  if $limit $sudo apt-get update -qq >/dev/null 2>&1 &&
     $limit $sudo apt-get install -y -qq --no-install-recommends python3-matplotlib >/dev/null 2>&1 &&
     "$python" -c 'import matplotlib' 2>/dev/null; then
    echo "install-deps: installed matplotlib $("$python" -c 'import matplotlib; print(matplotlib.__version__)')"
    local installed=$python
    python=$on_path
    say_which_python "$installed"
  else
    echo "install-deps: apt-get could not install python3-matplotlib for $python; the plot tests will be" \
         "skipped" >&2
  fi
}

install_node_packages() {
  if [ ! -x scripts/node/install.sh ] && [ ! -f scripts/node/install.sh ]; then
    echo "install-deps: no scripts/node/install.sh; the Compiler Explorer decoding tests will be skipped" >&2
    return 0
  fi
  if ! "${BASH:-bash}" scripts/node/install.sh; then
    echo "install-deps: scripts/node/install.sh failed; the Compiler Explorer decoding tests will be skipped" >&2
  fi
}

install_matplotlib
install_node_packages
exit 0
