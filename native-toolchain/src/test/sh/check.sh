#!/usr/bin/env bash
# The toolchain's own checks: the C stand-ins against the machine, and the driver's version lines against the
# patterns Quarkus parses. The native build of integration-tests is the check of the whole. Usage: check.sh <home>
set -euo pipefail
home=$1
here=$(cd "$(dirname "$0")/.." && pwd)
main=$(cd "$here/../main" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
include=$home/lib/svm/clibraries/linux-amd64/include
gcc -O1 -Wall -Werror -I"$include" "$here/c/toolchain_test.c" "$main/c/libchelper.c" -o "$work/toolchain_test" -ldl
"$work/toolchain_test" "$home"

version=$("$home/bin/native-image" --version)
echo "$version" | sed -n 1p | grep -Eq '^native-image [0-9]+\.[0-9]+\.[0-9]+ .+$' || { echo "version line 1: $version" >&2; exit 1; }
echo "$version" | sed -n 2p | grep -Eq '^.* Runtime Environment GraalVM CE [^ ]+\+[^ ]+ \([^)]*build .*\)$' || { echo "version line 2: $version" >&2; exit 1; }
echo "$version" | sed -n 3p | grep -Eq '^.* VM GraalVM CE [^ ]+ \([^)]*build .*\)$' || { echo "version line 3: $version" >&2; exit 1; }
[ "$(echo "$version" | wc -l)" -eq 3 ] || { echo "version: not three lines: $version" >&2; exit 1; }
echo "driver: --version prints the three lines Quarkus parses"

if "$home/bin/native-image" --no-such-option Main > "$work/out" 2>&1; then
  echo "driver: an unknown option must fail" >&2; exit 1
fi
grep -q "unknown option '--no-such-option'" "$work/out" || { cat "$work/out" >&2; exit 1; }
echo "driver: an unknown option stops it, named"
