#!/usr/bin/env bash
# Install and build the TypeScript example delegator (examples/ts-delegator): `npm ci` from the
# committed package-lock.json, then `npm run build` (tsc -> dist/). Idempotent: does nothing when
# the stamp examples/ts-delegator/node_modules/.setup.sha256 matches the lock file and the
# sources, and dist/main.js exists. Needs no stdin (CI-safe).
#
# Env: NPM   npm command to use (default: npm)
set -euo pipefail

SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd -- "${SCRIPT_DIR}/.." && pwd)"
DIR="${REPO_ROOT}/examples/ts-delegator"
LOCK="${DIR}/package-lock.json"
STAMP="${DIR}/node_modules/.setup.sha256"
NPM="${NPM:-npm}"

install_hint() {
    cat >&2 <<'HINT'
setup-node: Node.js >= 20 and npm are needed for the TypeScript example delegator.
  Debian/Ubuntu: apt-get install -y nodejs npm   (check `node --version` is 20 or later)
  or install Node.js 20 LTS from https://nodejs.org/ (it ships npm)
HINT
}

[[ -f "${LOCK}" ]] || { echo "setup-node: missing ${LOCK}" >&2; exit 1; }
if ! command -v node >/dev/null 2>&1 || ! command -v "${NPM}" >/dev/null 2>&1; then
    install_hint
    exit 1
fi
major="$(node -p 'process.versions.node.split(".")[0]')"
if (( major < 20 )); then
    echo "setup-node: node $(node --version) is too old (need >= 20)" >&2
    install_hint
    exit 1
fi

# What the build depends on: the lock file, the manifest, the compiler settings and the sources.
want="$(cd "${DIR}" && cat package-lock.json package.json tsconfig.json src/*.ts | sha256sum | cut -d' ' -f1)"
have="$(cat "${STAMP}" 2>/dev/null || true)"
if [[ "${want}" == "${have}" && -f "${DIR}/dist/main.js" ]]; then
    echo "setup-node: examples/ts-delegator up to date (sha256 ${want:0:12})"
    exit 0
fi

start=${SECONDS}
cd "${DIR}"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
"${NPM}" ci --no-audit --no-fund </dev/null
rm -rf dist
"${NPM}" run --silent build </dev/null
[[ -f dist/main.js ]] || { echo "setup-node: build produced no dist/main.js" >&2; exit 1; }
echo "${want}" > "${STAMP}"
echo "setup-node: installed and built examples/ts-delegator in $((SECONDS - start))s (sha256 ${want:0:12})"
