#!/bin/bash
# Starts the bind-mounted distribution the way the official image starts its own: settings
# passed as environment variables whose name holds a dot (discovery.type=single-node) become
# -E options, as the official image's entrypoint does.
set -euo pipefail
settings=()
while IFS= read -r -d '' entry; do
  name="${entry%%=*}"
  [[ "$name" == *.* ]] && settings+=("-E$entry")
done < <(env -0)
exec /opt/elasticsearch/bin/elasticsearch \
  -Enetwork.host=0.0.0.0 \
  -Epath.data=/usr/share/elasticsearch/data \
  -Epath.logs=/usr/share/elasticsearch/logs \
  "${settings[@]}"
