#!/usr/bin/env bash
# vendor.sh: front-end files from npm into static/vendor/ (no CDN: pages load nothing from other
# hosts). Each package is pinned to a version and its registry integrity (SHA-512); npm pack
# checks the tarball against it, and so does this script. Used by `make vendor` (and make test).
set -euo pipefail
cd "$(dirname "$0")/.."

# package  version  integrity (npm view <package>@<version> dist.integrity)  file in the package  destination
PACKAGES=(
  "axe-core 4.14.1 sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ== axe.min.js static/vendor/axe-core/axe.min.js"
)

source scripts/services.sh
if ! command -v npm >/dev/null; then
    if can_apt; then
        apt_install "npm (to vendor front-end files)" npm
    else
        echo "error: npm not found; install Node.js and npm (on Debian/Ubuntu: sudo apt-get install npm), then run make vendor"
        exit 1
    fi
fi
for entry in "${PACKAGES[@]}"; do
    read -r name version integrity file destination <<<"$entry"
    stamp="$destination.$version"
    if [ -f "$destination" ] && [ -f "$stamp" ]; then continue; fi
    echo "==> Vendoring $name@$version ($file) into $destination"
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    tarball=$(cd "$work" && npm pack --silent "$name@$version" 2>/dev/null | tail -1)
    actual="sha512-$(openssl dgst -sha512 -binary "$work/$tarball" | base64 -w0)"
    if [ "$actual" != "$integrity" ]; then
        echo "error: $name@$version from the registry has integrity $actual, not the pinned $integrity; refusing it"; exit 1
    fi
    tar -xzf "$work/$tarball" -C "$work" "package/$file" package/LICENSE
    mkdir -p "$(dirname "$destination")"
    rm -f "$destination".*
    cp "$work/package/$file" "$destination"
    cp "$work/package/LICENSE" "$(dirname "$destination")/LICENSE"
    touch "$stamp"
    rm -rf "$work"; trap - EXIT
done
