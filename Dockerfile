# The gateway and the loader (same image; docker-compose.yml picks the command).
# NODE_IMAGE: any image with Node 24 and npm at /usr/local (docker-compose.local.yml builds one
# where images cannot be pulled).
ARG NODE_IMAGE=node:24-slim
FROM ${NODE_IMAGE}
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
ENV HOST=0.0.0.0 PORT=8080
EXPOSE 8080
CMD ["node", "scripts/start.ts", "--no-load"]
