#!/usr/bin/env bash
# Runs the image's runtime contract without Docker: the production tree made by
# simulate-image-build.sh, started through infra/docker/entrypoint.sh under tini
# with the same environment as the ConfigMap, against a real Postgres and Redis.
# Checks: both roles start, healthcheck.mjs modes, the Host header the Kubernetes
# probes send, one demo job end to end over /mcp, and graceful SIGTERM exits.
#
#   SMOKE_DATABASE_URL=postgres://postgres@127.0.0.1:5432/stepwise_infra_smoke \
#   SMOKE_REDIS_URL=redis://127.0.0.1:6379 \
#   bash infra/scripts/smoke-prod-tree.sh /tmp/simrun/app
#
# Uses its own database name and queue prefix; it creates the database first
# (the apps' own create-if-missing races when several start at once).
set -euo pipefail

app="${1:?usage: smoke-prod-tree.sh APP_DIR (the app/ directory of simulate-image-build.sh)}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
: "${SMOKE_DATABASE_URL:?set SMOKE_DATABASE_URL}"
: "${SMOKE_REDIS_URL:?set SMOKE_REDIS_URL}"
server_port="${SMOKE_HTTP_PORT:-13000}"
health_port="${SMOKE_WORKER_HEALTH_PORT:-19464}"
data="$(mktemp -d)"
logs="$(mktemp -d)"

tini=()
if command -v tini >/dev/null 2>&1; then tini=(tini -s --); else echo "tini not installed: starting the entrypoint directly"; fi

# The image's ENV plus the ConfigMap's values.
export STEPWISE_APP_DIR="$app" NODE_ENV=production NODE_OPTIONS=--enable-source-maps
export DATABASE_URL="$SMOKE_DATABASE_URL" REDIS_URL="$SMOKE_REDIS_URL"
export STEPWISE_QUEUE_PREFIX="infra-smoke-$$" LOG_LEVEL=info STEPWISE_DATA_DIR="$data" STEPWISE_LEASE_MS=10000 STEPWISE_DB_POOL=5
export STEPWISE_TRANSPORT=http STEPWISE_HTTP_HOST=0.0.0.0 STEPWISE_HTTP_PORT="$server_port"
export STEPWISE_ALLOWED_HOSTS=localhost,127.0.0.1,stepwise-mcp-server
export STEPWISE_WORKER_CONCURRENCY=4 STEPWISE_SHUTDOWN_GRACE_MS=20000 STEPWISE_WORKER_HEALTH_HOST=0.0.0.0

status=0
ok() { echo "  ok   $*"; }
bad() { echo "  FAIL $*"; status=1; }
pids=()
same() { if [ "$1" = "$2" ]; then ok "$3"; else bad "$3 (got $1)"; fi; }
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT

# Create the database once, up front.
db="${SMOKE_DATABASE_URL##*/}"
db="${db%%\?*}"
admin="${SMOKE_DATABASE_URL%/*}/postgres"
if command -v psql >/dev/null 2>&1; then
  psql "$admin" -tAc "select 1 from pg_database where datname = '$db'" | grep -q 1 || psql "$admin" -qc "create database \"$db\""
fi

"${tini[@]}" "$here/docker/entrypoint.sh" server >"$logs/server.log" 2>&1 &
pids+=($!)
server_pid=$!
STEPWISE_WORKER_HEALTH_PORT="$health_port" "${tini[@]}" "$here/docker/entrypoint.sh" worker >"$logs/worker1.log" 2>&1 &
pids+=($!)
worker1_pid=$!
STEPWISE_WORKER_HEALTH_PORT="$((health_port + 1))" "${tini[@]}" "$here/docker/entrypoint.sh" worker >"$logs/worker2.log" 2>&1 &
pids+=($!)

for _ in $(seq 1 60); do
  if STEPWISE_HTTP_PORT="$server_port" node "$here/docker/healthcheck.mjs" ready 2>/dev/null; then break; fi
  sleep 0.5
done
check_hc() {
  local name="$1"
  shift
  if env "$@" node "$here/docker/healthcheck.mjs" "$name"; then ok "healthcheck.mjs $name"; else bad "healthcheck.mjs $name"; fi
}
check_hc ready STEPWISE_HTTP_PORT="$server_port"
check_hc server STEPWISE_HTTP_PORT="$server_port"
check_hc worker STEPWISE_WORKER_HEALTH_PORT="$health_port"
check_hc worker STEPWISE_WORKER_HEALTH_PORT="$((health_port + 1))"
check_hc auto STEPWISE_HTTP_PORT=1 STEPWISE_WORKER_HEALTH_PORT="$health_port"

ip="$(hostname -I 2>/dev/null | awk '{print $1}')"
if [ -n "$ip" ] && command -v curl >/dev/null 2>&1; then
  code="$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: localhost' "http://$ip:$server_port/readyz")"
  same "$code" 200 "kubelet-style probe (pod IP, Host: localhost) /readyz -> 200"
  code="$(curl -s -o /dev/null -w '%{http_code}' "http://$ip:$server_port/healthz")"
  echo "  info pod-IP probe without a Host override -> $code (403 = the Host allow-list covers /healthz too)"
  code="$(curl -s -o /dev/null -w '%{http_code}' "http://$ip:$health_port/healthz")"
  same "$code" 200 "worker /healthz on the pod IP -> 200"

  body='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"start_job","arguments":{"type":"demo.steps","input":{"steps":3,"stepMs":100},"idempotencyKey":"infra-smoke-'$$'","waitSeconds":20}}}'
  out="$(curl -s -H 'Host: localhost' -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
    -d "$body" "http://127.0.0.1:$server_port/mcp")"
  if printf '%s' "$out" | grep -q 'succeeded'; then ok "demo.steps job ran to succeeded through /mcp and the workers"; else bad "demo.steps job: $(printf '%s' "$out" | head -c 600)"; fi
fi

start=$(date +%s)
kill -TERM "$worker1_pid"
wait "$worker1_pid" && rc=0 || rc=$?
same "$rc" 0 "worker exited 0 on SIGTERM after $(($(date +%s) - start)) s"
if grep -q '"worker stopped"' "$logs/worker1.log"; then ok "worker logged a graceful stop"; else bad "worker did not log a graceful stop"; fi
kill -TERM "$server_pid"
wait "$server_pid" && rc=0 || rc=$?
same "$rc" 0 "server exited 0 on SIGTERM"

if [ "$status" = 0 ]; then rm -rf "$logs"; else echo "logs in $logs"; tail -n 20 "$logs"/*.log; fi
exit "$status"
