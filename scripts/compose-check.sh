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
profile=default
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile="${2:-}"; shift 2 ;;
    *) echo "compose-check: unknown argument $1 (use --profile cluster)" >&2; exit 2 ;;
  esac
done
[ "$profile" = default ] || [ "$profile" = cluster ] || { echo "compose-check: no profile $profile (default or cluster)" >&2; exit 2; }
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

free_port() { node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })"; }
export GATEWAY_PORT GATEWAY_2_PORT
GATEWAY_PORT="$(free_port)"
GATEWAY_2_PORT="$(free_port)"
compose=("$venv/bin/podman-compose" -p "$PROJECT" -f docker-compose.yml -f docker-compose.local.yml)
if [ "$profile" = cluster ]; then
  # The profile's own settings (compose/cluster.env), and a budget small enough to spend in a
  # check: 600 points per minute, per API key (one key spends it, others read).
  set -a
  # shellcheck source=../compose/cluster.env
  . compose/cluster.env
  set +a
  # The local override runs the three nodes in es-1's network namespace (docker-compose.local.yml says why).
  export ES_URL=http://es-1:9200,http://es-1:9201,http://es-1:9202
  export RATE_LIMIT=10/600 API_KEYS="compose-check-budget-key,compose-check-read-key-1,compose-check-read-key-2,compose-check-read-key-3,compose-check-read-key-4"
  compose=("$venv/bin/podman-compose" --profile cluster -p "$PROJECT" -f docker-compose.yml -f docker-compose.local.yml)
fi
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
# The compose file's healthcheck, run inside the container; the local cluster's nodes share es-1's
# network namespace (docker-compose.local.yml), so each is asked on its own port.
health() {
  case "$1" in
    es-[123]) podman exec "$2" curl -fs "http://localhost:$((9199 + ${1#es-}))/_cluster/health?wait_for_status=yellow&timeout=1s" ;;
    *) podman healthcheck run "$2" ;;
  esac
}
healthy() {
  local id
  id="$(container "$1")"
  for attempt in $(seq 1 120); do
    if health "$1" "$id" >/dev/null 2>&1; then return 0; fi
    if [ "$attempt" = 120 ] || [ "$(podman inspect --format '{{.State.Running}}' "$id")" != true ]; then
      podman logs --tail 30 "$id" >&2
      say "$1 did not become healthy"
      exit 1
    fi
    sleep 2
  done
}
if [ "$profile" = cluster ]; then
  stores=(es-1 es-2 es-3 valkey)
  serving=(follower gateway gateway-2)
else
  stores=(elasticsearch)
  serving=(follower gateway)
fi
"${compose[@]}" up -d --no-deps "${stores[@]}" >"$work/up.log" 2>&1 || { tail -30 "$work/up.log" >&2; exit 1; }
for service in "${stores[@]}"; do healthy "$service"; done
say "${stores[*]} healthy after $((SECONDS - started)) s; publishing the sample"
"${compose[@]}" up -d --no-deps publisher >>"$work/up.log" 2>&1 || { tail -30 "$work/up.log" >&2; exit 1; }
publisher_exit="$(podman wait "$(container publisher)")"
podman logs "$(container publisher)" >"$work/publisher.log" 2>&1
[ "$publisher_exit" = 0 ] || { tail -30 "$work/publisher.log" >&2; say "the publisher exited with $publisher_exit"; exit 1; }
say "published after $((SECONDS - started)) s; starting ${serving[*]}"
"${compose[@]}" up -d --no-deps "${serving[@]}" >>"$work/up.log" 2>&1 || { tail -30 "$work/up.log" >&2; exit 1; }

# Ready once the follower's first load is live (the gateways answer 503 until then).
gateway="http://127.0.0.1:$GATEWAY_PORT"
gateway_2="http://127.0.0.1:$GATEWAY_2_PORT"
ready_urls=("$gateway")
[ "$profile" = cluster ] && ready_urls+=("$gateway_2")
for url in "${ready_urls[@]}"; do
  for attempt in $(seq 1 120); do
    curl -fsS --max-time 2 "$url/v1/ready" >/dev/null 2>&1 && break
    if [ "$attempt" = 120 ]; then
      for service in "${serving[@]}"; do
        id="$(container "$service")"
        [ -n "$id" ] && { say "$service log:"; podman logs --tail 20 "$id" >&2; }
      done
      say "the gateway was not ready on $url"
      exit 1
    fi
    sleep 2
  done
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

# 6. The cluster profile: green with replicas, one budget across both gateways, a node killed under reads.
if [ "$profile" = cluster ]; then
  node scripts/compose-cluster-checks.ts "$gateway" "$gateway_2" "$(container es-1)" "$(container es-2)" 600 \
    compose-check-budget-key compose-check-read-key-1 compose-check-read-key-2 compose-check-read-key-3 compose-check-read-key-4 \
    || failures=$((failures + 1))
fi

say "$profile profile: $( [ "$failures" = 0 ] && echo passed || echo "$failures check(s) failed") in $((SECONDS - started)) s (gateway $gateway)"
exit $((failures > 0))
