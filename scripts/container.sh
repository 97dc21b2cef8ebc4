#!/bin/sh
# The image's entrypoint: which role this container plays. STICKERS_ROLE and PORT are exported into the role's process
# so that the healthcheck (which Docker starts with the container's environment, not this one) can read them there.
set -e
role="${1:-server}"
[ "$#" -gt 0 ] && shift
case "$role" in
  server) export STICKERS_ROLE=server PORT="${PORT:-3000}"; exec node server/dist/main.js "$@" ;;
  landing) export STICKERS_ROLE=landing PORT="${PORT:-3001}"; cd landing && exec node server.mjs "$@" ;;
  trace) exec node server/dist/cli.js trace "$@" ;;
  # Any command of the CLI (npm run leads -- …): leads setup, leads doctor, leads backup /data/copy.sqlite, …
  leads) exec node server/dist/cli.js "$@" ;;
  *) echo "usage: server | landing | leads <command> (setup, doctor, trace, backup, …) | trace <request_id|number>" >&2; exit 2 ;;
esac
