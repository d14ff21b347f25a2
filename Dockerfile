# The gateway (CMD: node --max-semi-space-size=8 src/server.ts) and the loader (docker-compose.yml runs `node loader/cli.ts --follow`).
# NODE_IMAGE: any image with Node 24 and npm at /usr/local (docker-compose.local.yml builds one
# where images cannot be pulled).
ARG NODE_IMAGE=node:24-slim

# The explorer and API reference pages (/explorer/, /docs/) need the front-end toolchain (dev
# dependencies) to build; only their output, web/dist, goes into the image.
FROM ${NODE_IMAGE} AS pages
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build:web

FROM ${NODE_IMAGE}
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
COPY --from=pages /app/web/dist web/dist
ENV HOST=0.0.0.0 PORT=8080
EXPOSE 8080
# 8 MB semi-spaces: V8 otherwise grows the young generation to ~130 MB under a steady stream of
# short-lived buffers (a download, a busy minute) though what lives stays ~25 MB (bench/README.md).
CMD ["node", "--max-semi-space-size=8", "src/server.ts"]
