#!/bin/sh
# Installs the npm packages (pinned by package-lock.json) that scripts/tests/test_celink.py uses to
# decode the suite's Compiler Explorer links as Compiler Explorer does. Prints one line; always exits 0,
# so a machine without npm or without network still runs the tests (the node check is then skipped).
cd "$(dirname "$0")" || exit 0
if [ -f node_modules/.package-lock.json ] && [ node_modules/.package-lock.json -nt package-lock.json ] \
   && [ -f node_modules/lz-string/package.json ] && [ -f node_modules/rison/package.json ]; then
    echo "scripts/node: lz-string and rison already installed"
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "scripts/node: npm not found; the Compiler Explorer link test against node will be skipped"
    exit 0
fi
limit=""
command -v timeout >/dev/null 2>&1 && limit="timeout 300"
if log=$($limit npm ci --no-audit --no-fund --prefer-offline --fetch-retries=1 --loglevel=error 2>&1); then
    echo "scripts/node: installed lz-string and rison from package-lock.json"
else
    echo "scripts/node: npm ci failed ($(printf '%s' "$log" | tr '\n' ' ' | cut -c1-160)); the node link test will be skipped"
fi
exit 0
