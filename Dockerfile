# The gateway and the loader (same image; docker-compose.yml picks the command).
FROM node:24-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
ENV HOST=0.0.0.0 PORT=8080
EXPOSE 8080
CMD ["node", "scripts/start.ts", "--no-load"]
