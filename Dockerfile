# The gateway (CMD: node --max-semi-space-size=8 src/server.ts) and the loader (docker-compose.yml runs `node loader/cli.ts --follow`).
# NODE_IMAGE: any image with Node 24 and npm at /usr/local (docker-compose.local.yml builds one
# where images cannot be pulled).
ARG NODE_IMAGE=node:24-slim

# The image runs on its own Node 24. The optional dependency `node` (a second Node 24 that npm
# scripts run on where the machine's Node is older) must not be fetched into it: its install
# script downloads a whole runtime.

# The explorer and API reference pages (/explorer/, /docs/) need the front-end toolchain (dev
# dependencies) to build; only their output, web/dist, goes into the image. Its native parts are
# optional dependencies too, so `node` is skipped here by running no install scripts (none of
# the others is needed to build the pages; package.json `allowScripts` refuses them anyway),
# and the pages are built with the image's `node` rather than through npm's PATH.
FROM ${NODE_IMAGE} AS pages
WORKDIR /app
COPY package.json package-lock.json ./
# The explorer goes through the typed client (packages/client): its dependencies are installed with it.
COPY packages/client/package.json packages/client/
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN node web/build.ts

FROM ${NODE_IMAGE}
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund
COPY . .
COPY --from=pages /app/web/dist web/dist
ENV HOST=0.0.0.0 PORT=8080 WORKERS=auto
EXPOSE 8080
# 8 MB semi-spaces: under a steady stream of short-lived buffers (a download, a busy minute) V8
# otherwise grows the young generation to several times what lives, and keeps it.
CMD ["node", "--max-semi-space-size=8", "src/server.ts"]
