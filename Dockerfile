# syntax=docker/dockerfile:1
# autoclaim: build with `docker build -t autoclaim .`; run and compose usage in docs/operations.md.
#
# Node 26 is the Active LTS line ("Lithium", LTS since 2026-10-28). The build and runtime stages
# must share one base image: the native addons (better-sqlite3, unix-dgram) are compiled in the
# first and loaded in the second.
ARG NODE_IMAGE=node:26-trixie-slim

# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Toolchain for the native addons, in case no prebuilt binary matches.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# tsc into dist/; the dev dependencies are pruned after it.
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# tini as PID 1 forwards SIGTERM/SIGHUP to node and reaps zombies.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*

# MALLOC_ARENA_MAX=2, as in the systemd unit (which says why): a steadier, lower peak RSS (with the
# node flag of the entry point, ~30 MB less at 10,000 wallets: bench/RESULTS.md, "Node flags").
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=2 \
    STATE_DIRECTORY=/var/lib/autoclaim \
    AUTOCLAIM_CONFIG=/etc/autoclaim/autoclaim.yaml \
    AUTOCLAIM_HEALTH_URL=http://127.0.0.1:9464/healthz

WORKDIR /app
# Owned by root and read-only to the service user: the code cannot be changed by what it runs.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY config ./config

# The only writable place (besides a tmpfs /tmp): the state volume, private to the node user.
RUN mkdir -p /var/lib/autoclaim /etc/autoclaim \
 && chown node:node /var/lib/autoclaim \
 && chmod 0700 /var/lib/autoclaim
VOLUME ["/var/lib/autoclaim"]

USER node
EXPOSE 9464

# Needs metrics.listen in the config (127.0.0.1:9464 by default here); the slim image has no curl,
# so node itself asks. AUTOCLAIM_HEALTH_URL points it elsewhere (the sandbox service uses its own).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.AUTOCLAIM_HEALTH_URL, { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# The same entry as the package bin (`autoclaim`) and the tests: dist/cli/main.js, with the node
# flags of the systemd unit (a small young generation: see the unit's comment), and `--` after them
# (Node reads an --env-file after the script too: the unit's comment).
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--max-semi-space-size=1", "--", "/app/dist/cli/main.js"]
CMD ["run"]
