#!/bin/sh
# Role selector for the Stepwise image. Runs under tini (PID 1) and execs node,
# so node receives SIGTERM directly.
#   stepwise server [args...]   MCP server (Streamable HTTP on $STEPWISE_HTTP_PORT)
#   stepwise worker [args...]   worker (health on $STEPWISE_WORKER_HEALTH_PORT)
#   stepwise cli [args...]      the operator CLI: keys create|list|revoke, migrate, audit
#   stepwise <cmd> [args...]    anything else, e.g. `node -e ...` or `sh`
set -eu
cd "${STEPWISE_APP_DIR:-/app}"

role="${1:-server}"
if [ "$#" -gt 0 ]; then shift; fi

case "$role" in
  server | mcp-server)
    exec node apps/mcp-server/dist/main.js "$@"
    ;;
  worker)
    exec node apps/worker/dist/main.js "$@"
    ;;
  cli)
    exec node apps/cli/dist/main.js "$@"
    ;;
  *)
    exec "$role" "$@"
    ;;
esac
