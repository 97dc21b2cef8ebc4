#!/bin/sh
# The image's entrypoint: which role this container plays.
set -e
role="${1:-server}"
[ "$#" -gt 0 ] && shift
case "$role" in
  server) export PORT="${PORT:-3000}"; exec node server/dist/main.js "$@" ;;
  landing) export PORT="${PORT:-3001}"; cd landing && exec node server.mjs "$@" ;;
  trace) exec node server/dist/cli.js trace "$@" ;;
  *) echo "usage: server | landing | trace <request_id|number>" >&2; exit 2 ;;
esac
