#!/usr/bin/env bash
# Replays the package-manager steps of infra/docker/Dockerfile without Docker, in a
# scratch directory, to check that they work against the current lockfile:
#   deps:    pnpm fetch (lockfile + workspace files only)
#   build:   COPY . .; pnpm install --offline --frozen-lockfile; pnpm run build
#   prod:    rm node_modules; pnpm install --prod --offline --frozen-lockfile
#   runtime: entrypoint resolves both roles' dist/main.js; workspace imports resolve
# Needs node, npx and the npm registry (it downloads pnpm and the dependencies).
# Not part of validate.sh: it takes a minute and needs the network.
#
#   bash infra/scripts/simulate-image-build.sh [WORKDIR]
#
# Keep the commands in step with the Dockerfile when either changes.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="${1:-$(mktemp -d)}"
pnpm_version="$(sed -n 's/.*"packageManager": *"pnpm@\([^"+]*\).*/\1/p' "$repo/package.json")"
pnpm=(npx -y "pnpm@${pnpm_version}")
export CI=true TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
store="$work/store"
app="$work/app"
mkdir -p "$app"
echo "simulating the image build in $work with pnpm $pnpm_version"

echo "== deps: pnpm fetch"
cp "$repo/package.json" "$repo/pnpm-lock.yaml" "$repo/pnpm-workspace.yaml" "$repo/.npmrc" "$app/"
(cd "$app" && "${pnpm[@]}" fetch --store-dir "$store" --reporter append-only | tail -3)

echo "== build: copy the context (Dockerfile.dockerignore's main exclusions), install offline, build"
tar -C "$repo" --exclude=node_modules --exclude=dist --exclude=.git --exclude=.turbo \
  --exclude=coverage --exclude='*.tsbuildinfo' --exclude=.env --exclude=./infra -cf - . | tar -C "$app" -xf -
(cd "$app" && "${pnpm[@]}" install --offline --frozen-lockfile --store-dir "$store" --reporter append-only | tail -3)
(cd "$app" && "${pnpm[@]}" run build)

echo "== prod: reinstall without dev dependencies"
(cd "$app" && rm -rf node_modules apps/*/node_modules packages/*/node_modules &&
  "${pnpm[@]}" install --prod --offline --frozen-lockfile --store-dir "$store" --reporter append-only | tail -3)
echo "prod node_modules: $(du -sh "$app/node_modules" | cut -f1)"

echo "== runtime: entrypoints and workspace imports"
status=0
for role in mcp-server worker; do
  if [ -f "$app/apps/$role/dist/main.js" ]; then
    echo "  ok   apps/$role/dist/main.js"
  else
    echo "  FAIL apps/$role/dist/main.js missing"
    status=1
  fi
done
(cd "$app/apps/worker" && node --input-type=module -e '
  const s = await import("@stepwise/shared");
  const { existsSync } = await import("node:fs");
  if (!existsSync(s.MIGRATIONS_FOLDER)) throw new Error("migrations missing: " + s.MIGRATIONS_FOLDER);
  await import("bullmq"); await import("ioredis");
  console.log("  ok   @stepwise/shared, migrations, bullmq and ioredis resolve from the prod tree");
') || status=1
exit "$status"
