#!/usr/bin/env bash
# The guide's native figures, measured in one run beside the JVM's (operations.adoc, "Native images"): start-up time
# and RSS of the integration-tests application, and the latency of a lock taken and released through its REST
# endpoint, on an embedded MariaDB. Needs a build with -Pnative-tests first. Usage: native-figures.sh [requests]
set -euo pipefail
cd "$(dirname "$0")/../../.."
requests=${1:-2000}
runner=$(ls target/*-runner | head -1)
jar=target/quarkus-app/quarkus-run.jar
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT

(cd .. && ./mvnw -q -o -pl test-support exec:java -Dexec.mainClass=io.quarkiverse.mysqllock.test.DevDatabase) > "$work/db.log" 2>&1 &
for _ in $(seq 1 120); do grep -q 'MariaDB is running' "$work/db.log" && break; sleep 1; done
url=$(sed -n 's/^MariaDB is running: \([^ ]*\) (user \([^,]*\),.*/\1/p' "$work/db.log")
user=$(sed -n 's/^MariaDB is running: [^ ]* (user \([^,]*\),.*/\1/p' "$work/db.log")
settings=(-Dquarkus.http.port=18181 -Dquarkus.datasource.jdbc.url="$url" -Dquarkus.datasource.username="$user")

measure() { # label, command...
  local label=$1; shift
  local start end
  start=$(date +%s%N)
  "$@" > "$work/$label.log" 2>&1 &
  local pid=$!
  until grep -q 'Listening on' "$work/$label.log"; do
    kill -0 "$pid" 2>/dev/null || { cat "$work/$label.log" >&2; exit 1; }
    sleep 0.01
  done
  end=$(date +%s%N)
  local rss_started; rss_started=$(awk '/VmRSS/{print $2}' "/proc/$pid/status")
  local latency; latency=$("$JAVA" src/test/sh/NativeFigures.java http://localhost:18181 "$requests" "$requests")
  local rss_loaded; rss_loaded=$(awk '/VmRSS/{print $2}' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  echo "$label: listening after $(( (end - start) / 1000000 )) ms; RSS ${rss_started} kB started," \
    "${rss_loaded} kB after $((2 * requests)) requests; lock over REST p50/p99 ${latency// / / } us"
}
JAVA=${JAVA_HOME:-/usr}/bin/java
[ -x "$JAVA" ] || JAVA=java
echo "executable: $(du -m "$runner" | cut -f1) MB ($runner)"
measure jvm "$JAVA" "${settings[@]}" -jar "$jar"
measure native "$runner" "${settings[@]}"
