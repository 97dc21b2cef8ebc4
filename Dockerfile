# Stickers Leads: one image, two roles. `docker run IMAGE server` (default) or `docker run IMAGE landing`;
# `docker run IMAGE leads <command>` runs the CLI (setup, doctor, trace, backup…), and so does `leads <command>` in a
# running container (`docker exec … leads doctor`); `docker run IMAGE trace <request_id|number>` prints a lead's story.
# No `# syntax=` line on purpose: it makes BuildKit pull a frontend image, which fails offline or behind a mirror.
ARG NODE_VERSION=20.20.2

FROM node:${NODE_VERSION}-bookworm-slim AS base
WORKDIR /app

# better-sqlite3 compiles from source (no prebuilt binary can be downloaded): it needs a toolchain.
FROM base AS deps
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
# node-gyp builds against the headers of the image's own Node instead of downloading them.
ENV npm_config_nodedir=/usr/local
COPY package.json package-lock.json ./
COPY shared/package.json shared/package.json
COPY sandbox/package.json sandbox/package.json
COPY server/package.json server/package.json
COPY landing/package.json landing/package.json
RUN npm ci --no-audit --no-fund

# Only what runs in production is built (the Telegram sandbox is for development and tests). After the prune:
# TypeScript stays only as nestjs-telegraf's peer (nothing loads it at run time), the sandbox's workspace link points
# at a folder the runtime does not have, and better-sqlite3 keeps its sources and objects beside the one addon it loads.
FROM deps AS build
COPY tsconfig.json nest-cli.json ./
COPY shared shared
COPY server server
COPY landing landing
RUN npm run build -w shared && npm run build -w server && npm run build -w landing \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/typescript node_modules/.bin/tsc node_modules/.bin/tsserver \
      node_modules/@stickers/telegram-sandbox node_modules/.bin/telegram-sandbox \
 && cd node_modules/better-sqlite3 \
 && mv build/Release/better_sqlite3.node /tmp/ \
 && rm -rf build deps src binding.gyp \
 && mkdir -p build/Release && mv /tmp/better_sqlite3.node build/Release/ \
 && cd /app && if find -L node_modules server/node_modules landing/node_modules -type l | grep .; then echo 'dangling links' >&2; exit 1; fi

FROM base AS runtime
# A font for the words of the digest's chart picture (resvg draws with the system's fonts; without one the bars come
# out without their labels).
RUN apt-get update \
 && apt-get install -y --no-install-recommends fonts-dejavu-core \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    DATABASE_PATH=/data/leads.sqlite \
    LANDING_SPOOL_DIR=/data/landing-spool
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/shared/package.json ./shared/package.json
COPY --from=build /app/shared/dist ./shared/dist
COPY --from=build /app/server/package.json ./server/package.json
COPY --from=build /app/server/dist ./server/dist
# The CLI's commander 14 is nested here (the root's commander 4 came with @nestjs/cli and is pruned with it).
COPY --from=build /app/server/node_modules ./server/node_modules
COPY --from=build /app/landing/package.json ./landing/package.json
# The landing's Express 4 stack is nested here (the root has Express 5, which Nest uses).
COPY --from=build /app/landing/node_modules ./landing/node_modules
COPY --from=build /app/landing/server.mjs ./landing/server.mjs
COPY --from=build /app/landing/build ./landing/build
COPY scripts/container.sh scripts/healthcheck.mjs ./scripts/
RUN mkdir -p /data && chown node:node /data && chmod +x scripts/container.sh \
 && printf '#!/bin/sh\nexec node /app/server/dist/cli.js "$@"\n' > /usr/local/bin/leads && chmod +x /usr/local/bin/leads
VOLUME ["/data"]
USER node
EXPOSE 3000 3001
# Probes only this container's own role, on its own port (scripts/healthcheck.mjs says how it knows).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 CMD ["node", "scripts/healthcheck.mjs"]
ENTRYPOINT ["scripts/container.sh"]
CMD ["server"]
