#!/usr/bin/env bash
# Install what the report tests need, if missing: Debian's `chromium` (headless checks of
# index.html, harness/tests/suite/report_html.rs) and `libxml2-utils` (`xmllint`, validating junit.xml
# against the Ant JUnit XSD, harness/tests/suite/report_junit.rs). Idempotent and non-interactive:
# does nothing when both commands exist; otherwise installs the versions apt has (as root, or
# through sudo when available). Needs no stdin (CI-safe).
set -euo pipefail

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v xmllint >/dev/null 2>&1 || missing+=(libxml2-utils)
if [[ ${#missing[@]} -eq 0 ]]; then
    echo "setup-chromium: chromium and xmllint present"
    exit 0
fi

as_root=()
if [[ "$(id -u)" != 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        as_root=(sudo -n)
    else
        echo "setup-chromium: ${missing[*]} missing and not root (no sudo): install with" \
            "\`apt-get install -y ${missing[*]}\` as root" >&2
        exit 1
    fi
fi
command -v apt-get >/dev/null 2>&1 || {
    echo "setup-chromium: no apt-get; install ${missing[*]} with your package manager" >&2
    exit 1
}
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
"${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup-chromium: installed ${missing[*]}"
