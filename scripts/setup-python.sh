#!/usr/bin/env bash
# Create/refresh <repo>/.venv with the pinned Python A2A SDK peer
# (interop/requirements.txt) and the Python example delegator's requirements
# (examples/python-delegator/requirements.txt). Idempotent: does nothing when the stamp
# .venv/.requirements.sha256 matches the current requirements file and the
# venv's interpreter still imports the SDK. Needs no stdin (CI-safe).
#
# Env: PYTHON   interpreter used to create the venv (default: python3)
#      VENV_DIR override the venv location (default: <repo>/.venv)
set -euo pipefail

SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd -- "${SCRIPT_DIR}/.." && pwd)"
REQ="${REPO_ROOT}/interop/requirements.txt"
REQ_EXAMPLE="${REPO_ROOT}/examples/python-delegator/requirements.txt"
VENV="${VENV_DIR:-${REPO_ROOT}/.venv}"
STAMP="${VENV}/.requirements.sha256"
PY="${PYTHON:-python3}"

[[ -f "${REQ}" ]] || { echo "setup-python: missing ${REQ}" >&2; exit 1; }
[[ -f "${REQ_EXAMPLE}" ]] || { echo "setup-python: missing ${REQ_EXAMPLE}" >&2; exit 1; }
command -v "${PY}" >/dev/null 2>&1 || { echo "setup-python: ${PY} not found" >&2; exit 1; }

want="$(cat "${REQ}" "${REQ_EXAMPLE}" | sha256sum | cut -d' ' -f1)"
have="$(cat "${STAMP}" 2>/dev/null || true)"

venv_ok() {
    [[ -x "${VENV}/bin/python" ]] &&
        "${VENV}/bin/python" -c 'import a2a.types, a2a.client, jsonschema' >/dev/null 2>&1
}

if [[ "${want}" == "${have}" ]] && venv_ok; then
    echo "setup-python: ${VENV} up to date (requirements sha256 ${want:0:12})"
    exit 0
fi

start=${SECONDS}
action="updated"
if [[ ! -x "${VENV}/bin/python" ]] || ! "${VENV}/bin/python" -c 'import sys' >/dev/null 2>&1; then
    rm -rf "${VENV}"
    "${PY}" -m venv "${VENV}" </dev/null
    action="created"
fi

rm -f "${STAMP}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
"${VENV}/bin/python" -m pip install --quiet --no-input -r "${REQ}" -r "${REQ_EXAMPLE}" </dev/null
"${VENV}/bin/python" -c 'import a2a.types, a2a.client, jsonschema' \
    || { echo "setup-python: a2a-sdk import failed after install" >&2; exit 1; }
echo "${want}" > "${STAMP}"

echo "setup-python: ${action} ${VENV} from interop/ and examples/python-delegator/ requirements in $((SECONDS - start))s (sha256 ${want:0:12})"
