#!/usr/bin/env bash
# Installs what the CPU-only test run needs beyond the machine's toolchain (CMake, Ninja, nvcc,
# Python 3), where it can:
#   - GoogleTest (the host tests; the `cpu` preset requires it): Debian/Ubuntu's libgtest-dev through
#     apt-get, after the same apt-get update as matplotlib; elsewhere it says how to get it;
#   - matplotlib for the python3 that runs the tests (`scripts/suite.py plot`; without it the plot
#     tests report "skipped" with the reason),
#   - the pinned npm packages that decode Compiler Explorer links in the tests (scripts/node/install.sh;
#     without node those tests report "skipped").
# It never fails the test command: where apt-get, sudo or the network is missing it says what was
# not installed and which tests will be skipped (or, for GoogleTest, how to install it), and exits 0.
# apt-get update runs at most once (a failed one is not retried) and every apt-get step under
# `timeout 80`, so a machine without network costs little of CI's four minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
python=$(command -v python3 || echo /usr/bin/python3)
apt_updated=""

gtest_found() {
  # Where Debian, Ubuntu, Fedora and a source build put GoogleTest's CMake package or library.
  local dir file
  for dir in ${INSTALL_DEPS_GTEST_DIRS:-/usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib \
             /usr/local/lib /usr/local/lib64 /opt/homebrew/lib}; do
    for file in "$dir/cmake/GTest/GTestConfig.cmake" "$dir/libgtest.a" "$dir/libgtest.so"; do
      [ -e "$file" ] && return 0
    done
  done
  return 1
}

how_to_get_gtest() {
  echo "install-deps: GoogleTest not installed ($1); the CPU-only test run needs it: install it with" \
       "'apt-get install libgtest-dev' (Debian/Ubuntu), 'dnf install gtest-devel' (Fedora)," \
       "'brew install googletest' (macOS), or build it from github.com/google/googletest with CMake" \
       "and give its prefix as -DCMAKE_PREFIX_PATH" >&2
}

sudo_prefix() {
  # "" for root, "sudo -n" with password-less sudo; fails otherwise.
  if [ "$(id -u)" = 0 ]; then echo ""; return 0; fi
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then echo "sudo -n"; return 0; fi
  return 1
}

apt_install() {
  # apt-get install the packages given, after one apt-get update; 0 when it installed them.
  local sudo limit=""
  command -v apt-get >/dev/null 2>&1 || return 1
  sudo=$(sudo_prefix) || return 1
  command -v timeout >/dev/null 2>&1 && limit="timeout 80"  # no network must not eat CI's time
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "$apt_updated" ]; then
    if $limit $sudo apt-get update -qq >/dev/null 2>&1; then apt_updated=ok; else apt_updated=failed; fi
  fi
  [ "$apt_updated" = ok ] || return 1
  $limit $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1
}

install_gtest() {
  if gtest_found; then
    echo "install-deps: GoogleTest is there"
    return 0
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    how_to_get_gtest "no apt-get here"
  elif ! sudo_prefix >/dev/null; then
    how_to_get_gtest "not root and no password-less sudo"
  elif apt_install libgtest-dev && gtest_found; then
    echo "install-deps: installed GoogleTest (libgtest-dev)"
  else
    how_to_get_gtest "apt-get could not install libgtest-dev"
  fi
  return 0
}

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
  if ! sudo_prefix >/dev/null; then
    echo "install-deps: not root and no password-less sudo: matplotlib not installed; the plot tests" \
         "will be skipped" >&2
    return 0
  fi
  if apt_install python3-matplotlib && "$python" -c 'import matplotlib' 2>/dev/null; then
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

install_gtest
install_matplotlib
install_node_packages
exit 0
