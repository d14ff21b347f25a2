#!/usr/bin/env bash
# `npm run compose:check`: runs docker-compose.yml for real where no image can be pulled, with
# podman-compose and the override docker-compose.local.yml (Elasticsearch and Node images built
# FROM localhost/debian:bookworm), then asks the gateway for /v1/ready, /v1/entities?limit=1 and
# /v1/exports/manifest.json, and tears everything down (containers, network, volumes; the built
# images stay as a cache). Exit 0 when all three answer as they should and the explorer page is served.
#
# Needs Podman with the base image (../shared/tools/container-engine.sh up provides both on the
# project's machines) and Python 3 for podman-compose, installed into .cache/ (a virtualenv).
# Not for Docker users: with Docker, `docker compose up` pulls the official images.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
started=$SECONDS
say() { echo "compose-check: $*" >&2; }

PODMAN_COMPOSE_VERSION=1.6.0
BASE_IMAGE=localhost/debian:bookworm
NODE_IMAGE=localhost/registry-gateway-node:24
PROJECT=registry-gateway-compose-check
work="$root/.cache/compose"

# 1. Podman and the local base image.
for engine in "$root/../shared/tools/container-engine.sh" "$root/../../shared/tools/container-engine.sh"; do
  if [ -x "$engine" ]; then "$engine" up >/dev/null; break; fi
done
command -v podman >/dev/null || { say "podman is not installed (../shared/tools/container-engine.sh up installs it)"; exit 2; }
podman image exists "$BASE_IMAGE" || { say "$BASE_IMAGE is missing (../shared/tools/container-engine.sh up builds it)"; exit 2; }

# 2. podman-compose, pinned, in a project-local virtualenv.
venv="$root/.cache/podman-compose-venv"
if [ "$("$venv/bin/podman-compose" --version 2>/dev/null | head -1)" != "podman-compose version $PODMAN_COMPOSE_VERSION" ]; then
  say "installing podman-compose $PODMAN_COMPOSE_VERSION into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "podman-compose==$PODMAN_COMPOSE_VERSION"
fi

# 3. What the override mounts or builds from: the project's Elasticsearch distribution and JDK
#    (scripts/elasticsearch.ts), and a Node 24 base image from node_modules/node and this npm.
eval "$(node --input-type=module -e "
  const { findJava, installDistribution } = await import('$root/scripts/elasticsearch.ts');
  console.log('export ES_LOCAL_HOME=' + JSON.stringify(await installDistribution('$root/.cache')));
  console.log('export ES_LOCAL_JAVA=' + JSON.stringify(findJava()));
")"
rm -rf "$work/elasticsearch" && mkdir -p "$work"
cp -r compose/local/elasticsearch "$work/elasticsearch"
cp -r "$ES_LOCAL_HOME/config" "$work/elasticsearch/config"
node_binary="$root/node_modules/node/bin/node"
[ -x "$node_binary" ] || { say "run npm ci first (node_modules/node holds Node 24)"; exit 2; }
npm_root="$(dirname "$(dirname "$(readlink -f "${npm_execpath:-$(command -v npm)}")")")"
rm -rf "$work/node-base" && mkdir -p "$work/node-base"
cp -L "$node_binary" "$work/node-base/node"
cp -r "$npm_root" "$work/node-base/npm"
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ]; then cp "$NODE_EXTRA_CA_CERTS" "$work/node-base/extra-ca.crt"; else : >"$work/node-base/extra-ca.crt"; fi
say "building $NODE_IMAGE (Node $("$node_binary" --version), npm $(node "$npm_root/bin/npm-cli.js" --version))"
podman build --quiet -t "$NODE_IMAGE" -f compose/local/node-base.Dockerfile "$work/node-base" >/dev/null

export GATEWAY_PORT
GATEWAY_PORT="$(node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")"
compose=("$venv/bin/podman-compose" -p "$PROJECT" -f docker-compose.yml -f docker-compose.local.yml)
container() { podman ps -aq --filter "label=com.docker.compose.project=$PROJECT" --filter "label=com.docker.compose.service=$1" | head -1; }
teardown() {
  say "tearing down"
  "${compose[@]}" down -v >/dev/null 2>&1 || true
}
trap teardown EXIT
"${compose[@]}" down -v >/dev/null 2>&1 || true

# 4. Build the compose images, then up, one service at a time in the order the compose file's
#    depends_on conditions give: podman-compose ignores `condition: service_healthy` on Podman
#    older than 4.6 (and healthchecks need systemd timers to run by themselves), so the script
#    enforces the conditions: the compose file's own healthcheck, run inside the container,
#    then the publisher run to completion with exit 0, then the follower and the gateway.
say "building the compose images"
"${compose[@]}" build >"$work/build.log" 2>&1 || { tail -30 "$work/build.log" >&2; exit 1; }
"${compose[@]}" up -d elasticsearch >"$work/up.log" 2>&1 || { tail -30 "$work/up.log" >&2; exit 1; }
es="$(container elasticsearch)"
for attempt in $(seq 1 90); do
  if podman healthcheck run "$es" >/dev/null 2>&1; then break; fi
  if [ "$attempt" = 90 ] || [ "$(podman inspect --format '{{.State.Running}}' "$es")" != true ]; then
    podman logs --tail 30 "$es" >&2
    say "elasticsearch did not become healthy"
    exit 1
  fi
  sleep 2
done
say "elasticsearch healthy after $((SECONDS - started)) s; publishing the sample"
"${compose[@]}" up -d --no-deps publisher >>"$work/up.log" 2>&1 || { tail -30 "$work/up.log" >&2; exit 1; }
publisher_exit="$(podman wait "$(container publisher)")"
podman logs "$(container publisher)" >"$work/publisher.log" 2>&1
[ "$publisher_exit" = 0 ] || { tail -30 "$work/publisher.log" >&2; say "the publisher exited with $publisher_exit"; exit 1; }
say "published after $((SECONDS - started)) s; starting the follower and the gateway"
"${compose[@]}" up -d --no-deps follower gateway >>"$work/up.log" 2>&1 || { tail -30 "$work/up.log" >&2; exit 1; }

# Ready once the follower's first load is live (the gateway answers 503 until then).
gateway="http://127.0.0.1:$GATEWAY_PORT"
for attempt in $(seq 1 90); do
  curl -fsS --max-time 2 "$gateway/v1/ready" >/dev/null 2>&1 && break
  if [ "$attempt" = 90 ]; then
    for service in follower gateway; do
      id="$(container "$service")"
      [ -n "$id" ] && { say "$service log:"; podman logs --tail 20 "$id" >&2; }
    done
    say "the gateway was not ready on $gateway"
    exit 1
  fi
  sleep 2
done

# 5. Three answers and the explorer page.
failures=0
check() {
  local route=$1 expect=$2 body
  if body="$(curl -fsS --max-time 10 "$gateway$route")" && node -e "process.exit(($expect)(JSON.parse(process.argv[1])) ? 0 : 1)" "$body"; then
    say "ok   $route"
  else
    say "FAIL $route: ${body:0:300}"
    failures=$((failures + 1))
  fi
}
check /v1/ready '(b) => b.data.status === "ready" && b.data.generation !== null'
check '/v1/entities?limit=1' '(b) => Array.isArray(b.data) && b.data.length === 1 && typeof b.data[0].id === "string"'
check /v1/exports/manifest.json '(m) => m.schemaVersion === "registry.export_manifest.v1" && Array.isArray(m.files) && m.files.length > 0'
# The explorer page, built into the image by the Dockerfile's pages stage.
if curl -fsS --max-time 10 "$gateway/explorer/" | grep -q '<script'; then
  say "ok   /explorer/"
else
  say "FAIL /explorer/: the built page is not served"
  failures=$((failures + 1))
fi

say "$( [ "$failures" = 0 ] && echo passed || echo "$failures check(s) failed") in $((SECONDS - started)) s (gateway $gateway)"
exit $((failures > 0))
