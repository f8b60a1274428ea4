# svc daemon image. Run with the Docker socket mounted and host networking (svc manages containers on
# the host's engine and its DNS responder and Caddy listen on the host):
#   docker run -d --name svc --network host -v /var/run/docker.sock:/var/run/docker.sock \
#     -v /srv/svc:/srv/svc -w /srv/svc svc
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY packages ./packages
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY drizzle ./drizzle
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates tini && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/packages ./packages
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/drizzle ./drizzle
COPY package.json ./
# The daemon talks to the host's Docker socket, which is root-owned; run as root only where that is
# needed (most installs mount the socket with a docker group instead: then pass --user node:<gid>).
WORKDIR /srv/svc
ENV SVC_DATA_DIR=/srv/svc/data NODE_ENV=production MALLOC_ARENA_MAX=2
EXPOSE 3000
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--optimize-for-size", "--max-semi-space-size=1", "--v8-pool-size=2", "--no-opt", "--no-sparkplug", "/app/dist/cli.js"]
CMD ["serve"]
