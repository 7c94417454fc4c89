#!/usr/bin/env bash
# Builds every release artifact (deploy/release.sh), then installs the
# Python wheel and the npm packages from the built files only, as a user
# would, with no Go on the PATH, and runs the example suites against
# them: clients/python/examples under pytest with azure-data-tables
# (Debian's), clients/js/examples under node:test with @azure/data-tables
# (pinned by the examples' package-lock.json). docs/testing.md includes
# these example files verbatim (examples/testing's TestDocExamples).
#
# Usage: .ci/packages.sh [OUTDIR]   (default: a temporary directory)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
out=${1:-$scratch/release}

echo "== release artifacts (deploy/release.sh)"
bash deploy/release.sh "$out"
ls -l "$out" "$out/python" "$out/npm"
(cd "$out" && sha256sum --quiet -c SHA256SUMS)

case $(uname -m) in
  x86_64) wheel_arch=x86_64 npm_platform=linux-x64 ;;
  aarch64 | arm64) wheel_arch=aarch64 npm_platform=linux-arm64 ;;
  *) echo "packages: no release build for $(uname -m)" >&2; exit 1 ;;
esac

# The PATH without any directory holding a go command.
nogo=
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -n "$d" ] && [ ! -x "$d/go" ] && nogo="$nogo${nogo:+:}$d"
done

PATH=$nogo
if command -v go >/dev/null; then
  echo "packages: go is still on the PATH ($(command -v go))" >&2
  exit 1
fi

echo "== Python: pip install --no-index of the wheel into a venv, pytest of clients/python/examples"
/usr/bin/python3 -m venv --system-site-packages "$scratch/venv"
"$scratch/venv/bin/python" -m pip install --no-index --disable-pip-version-check -q \
  "$out"/python/tablestore_testkit-*manylinux_2_17_"$wheel_arch"*.whl
(
  PATH="$scratch/venv/bin:$PATH"
  if [ "$(command -v tablestore)" != "$scratch/venv/bin/tablestore" ]; then
    echo "packages: the wheel put no tablestore command on the venv's PATH" >&2
    exit 1
  fi
  # The binary names the commit it was built from.
  v=$(tablestore version)
  echo "$v"
  case $v in
    *"revision $(git -C "$root" rev-parse HEAD)"*) ;;
    *) echo "packages: the wheel's binary is not stamped with this commit" >&2; exit 1 ;;
  esac
  cp -r clients/python/examples "$scratch/py"
  cd "$scratch/py"
  PYTHONDONTWRITEBYTECODE=1 python -m pytest -p no:cacheprovider -v
  echo "== the same suite against a server configured as the container's test kit (docs/testing-packages.md): controls beyond loopback, with a token"
  token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  port=$(python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  admin=$(python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  env TABLESTORE_DIR= TABLESTORE_CREATE=false TABLESTORE_TESTKIT=true TABLESTORE_TESTKIT_TOKEN="$token" \
    TABLESTORE_ADDR="0.0.0.0:$port" TABLESTORE_ADMIN_ADDR="0.0.0.0:$admin" TABLESTORE_SEED=seed \
    tablestore serve 2>"$scratch/container.log" &
  server=$!
  trap 'kill "$server" 2>/dev/null || true' EXIT
  python - "$admin" <<'PY'
import sys, time, urllib.request
for _ in range(300):
    try:
        urllib.request.urlopen("http://127.0.0.1:%s/readyz" % sys.argv[1], timeout=1)
        sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit("packages: the server did not become ready")
PY
  status=0
  TABLESTORE_URL="http://127.0.0.1:$port/devstoreaccount1" TABLESTORE_CONTROL_URL="http://127.0.0.1:$admin/testkit" \
    TABLESTORE_TESTKIT_TOKEN="$token" PYTHONDONTWRITEBYTECODE=1 python -m pytest -p no:cacheprovider -q || status=$?
  kill "$server"
  wait "$server" || true
  [ "$status" -eq 0 ] || { cat "$scratch/container.log" >&2; exit "$status"; }
  echo "== the Python helper's figures (docs/testing-packages.md)"
  PYTHONDONTWRITEBYTECODE=1 python measure.py
)

echo "== JavaScript: npm install of the tarballs into a scratch project, node --test of clients/js/examples"
cp -r clients/js/examples "$scratch/js"
# The helper from its tarball; every platform package from its tarball
# too (overrides), so none is looked up in a registry: npm installs the
# one for this platform and skips the others (os/cpu). @azure/data-tables
# comes pinned by the examples' lock file.
node - "$scratch/js/package.json" "$out/npm" <<'EOF'
const fs = require('node:fs');
const path = require('node:path');
const [file, dir] = process.argv.slice(2);
const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
pkg.overrides = {};
for (const t of fs.readdirSync(dir).filter((f) => f.endsWith('.tgz'))) {
  const m = /^tablestore-(testkit(?:-(?:linux|darwin|win32)-(?:x64|arm64))?)-\d/.exec(t);
  if (!m) throw new Error(`unexpected tarball ${t}`);
  const spec = 'file:' + path.join(dir, t);
  if (m[1] === 'testkit') pkg.dependencies['@tablestore/testkit'] = spec;
  else pkg.overrides['@tablestore/' + m[1]] = spec;
}
fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n');
EOF
(
  cd "$scratch/js"
  npm install --no-audit --no-fund --prefer-offline
  test -x "node_modules/@tablestore/testkit-$npm_platform/bin/tablestore"
  node --test --test-reporter=spec
  echo "== the JavaScript helper's figures (docs/testing-packages.md)"
  node measure.js
)
