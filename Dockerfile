# syntax=docker/dockerfile:1
# Build: compile better-sqlite3 and the TypeScript sources, then drop dev dependencies.
FROM node:20-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY commands ./commands
COPY data ./data
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

# Run: only the compiled app and production modules, as a non-root user, on a mounted database.
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    SVC_DB=/var/lib/svc/svc.db \
    SVC_HOST=0.0.0.0 \
    SVC_PORT=8080
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY --from=build /app/data ./data
RUN mkdir -p /var/lib/svc && chown node:node /var/lib/svc
USER node
VOLUME ["/var/lib/svc"]
EXPOSE 8080
ENTRYPOINT ["node", "/app/bin/run.js"]
CMD ["serve"]
