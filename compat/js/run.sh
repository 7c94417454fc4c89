#!/usr/bin/env bash
# Runs the @azure/data-tables scenarios in test/ against a fresh server on
# a free loopback port and stops it afterwards.
#
#   compat/js/run.sh              tablestore serve --in-memory (built from this checkout)
#   compat/js/run.sh azurite      Azurite, for comparison
#
# TABLESTORE_BIN names a prebuilt tablestore binary to use instead of
# building ./cmd/tablestore. With tablestore, test-tls/ runs against a
# second server over https and test-testkit/ against a third started with
# --testkit (TABLES_TESTKIT_URL names its controls). Extra arguments go to `node --test` (for example --test-name-pattern=edm).
# Needs `npm ci` in compat/js first. Exits non-zero when any scenario fails
# or the server does not come up within 60 seconds.
set -euo pipefail
cd "$(dirname "$0")"
here=$(pwd)
root=$(cd ../.. && pwd)

target=tablestore
if [ $# -gt 0 ] && [[ "$1" != -* ]]; then
  target=$1
  shift
fi

if [ ! -x node_modules/.bin/azurite-table ] || [ ! -d node_modules/@azure/data-tables ]; then
  echo "compat/js: node_modules missing; run \`npm ci\` in compat/js" >&2
  exit 2
fi

work=$(mktemp -d)
pid=
stop() {
  if [ -n "${cosmos_pid:-}" ] && kill -0 "$cosmos_pid" 2>/dev/null; then
    kill -TERM "$cosmos_pid" 2>/dev/null || true
    wait "$cosmos_pid" 2>/dev/null || true
  fi
  if [ -n "${kit_pid:-}" ] && kill -0 "$kit_pid" 2>/dev/null; then
    kill -TERM "$kit_pid" 2>/dev/null || true
    wait "$kit_pid" 2>/dev/null || true
  fi
  if [ -n "${tls_pid:-}" ] && kill -0 "$tls_pid" 2>/dev/null; then
    kill -TERM "$tls_pid" 2>/dev/null || true
    wait "$tls_pid" 2>/dev/null || true
  fi
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap stop EXIT

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')

case "$target" in
tablestore)
  bin=${TABLESTORE_BIN:-}
  if [ -z "$bin" ]; then
    if [ ! -d "$root/cmd/tablestore" ]; then
      echo "compat/js: no cmd/tablestore in this checkout and TABLESTORE_BIN unset" >&2
      exit 1
    fi
    bin="$work/tablestore"
    (cd "$root" && go build -o "$bin" ./cmd/tablestore)
  fi
  "$bin" serve --in-memory --addr "127.0.0.1:$port" >"$work/server.log" 2>&1 &
  pid=$!
  ;;
azurite)
  (cd "$work" && exec "$here/node_modules/.bin/azurite-table" --tableHost 127.0.0.1 --tablePort "$port" \
    --inMemoryPersistence --skipApiVersionCheck --disableProductStyleUrl --disableTelemetry --silent) \
    >"$work/server.log" 2>&1 &
  pid=$!
  ;;
*)
  echo "usage: $0 [tablestore|azurite] [node --test flags]" >&2
  exit 2
  ;;
esac

# Ready when the port accepts a connection; bounded at 60 s.
ready=
for _ in $(seq 600); do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "compat/js: $target exited before listening:" >&2
    cat "$work/server.log" >&2
    exit 1
  fi
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    ready=1
    break
  fi
  sleep 0.1
done
if [ -z "$ready" ]; then
  echo "compat/js: $target did not listen on 127.0.0.1:$port within 60s:" >&2
  cat "$work/server.log" >&2
  exit 1
fi

# The https pass (tablestore only): a throwaway CA and certificate made
# with openssl, a second server with --cert/--key, and Node trusting the
# CA through NODE_EXTRA_CA_CERTS.
tls_pid=
tls_port=
if [ "$target" = tablestore ]; then
  if ! command -v openssl >/dev/null; then
    echo "compat/js: openssl is needed for the https scenarios" >&2
    exit 1
  fi
  (
    cd "$work"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=compat-js-ca 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout key.pem -out req.csr -subj /CN=127.0.0.1 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >ext.cnf
    openssl x509 -req -in req.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out cert.pem -days 2 -extfile ext.cnf 2>/dev/null
  )
  node test-tls/tokens.js "$work" # token-key.pem and jwks.json, for the bearer scenarios
  tls_port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  "$bin" serve --in-memory --addr "127.0.0.1:$tls_port" --cert "$work/cert.pem" --key "$work/key.pem" \
    --bearer-jwks "$work/jwks.json" --bearer-issuer "$(node -p 'require("./test-tls/tokens.js").issuer')" \
    >"$work/server-tls.log" 2>&1 &
  tls_pid=$!
  for _ in $(seq 600); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$tls_port") 2>/dev/null; then break; fi
    if ! kill -0 "$tls_pid" 2>/dev/null; then
      echo "compat/js: the https server exited:" >&2
      cat "$work/server-tls.log" >&2
      exit 1
    fi
    sleep 0.1
  done
fi

# The test kit pass (tablestore only): serve --testkit, its controls on
# a loopback admin listener.
kit_pid=
kit_port=
if [ "$target" = tablestore ]; then
  kit_port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  kit_admin=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  "$bin" serve --testkit --addr "127.0.0.1:$kit_port" --admin-addr "127.0.0.1:$kit_admin" >"$work/server-kit.log" 2>&1 &
  kit_pid=$!
  for _ in $(seq 600); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$kit_admin") 2>/dev/null; then break; fi
    if ! kill -0 "$kit_pid" 2>/dev/null; then
      echo "compat/js: the testkit server exited:" >&2
      cat "$work/server-kit.log" >&2
      exit 1
    fi
    sleep 0.1
  done
fi

# The Cosmos DB pass (tablestore only): serve --cosmos, reached at
# localhost, which the SDK takes for Cosmos DB.
cosmos_pid=
cosmos_port=
if [ "$target" = tablestore ]; then
  cosmos_port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  "$bin" serve --cosmos --in-memory --addr "127.0.0.1:$cosmos_port" >"$work/server-cosmos.log" 2>&1 &
  cosmos_pid=$!
  for _ in $(seq 600); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$cosmos_port") 2>/dev/null; then break; fi
    if ! kill -0 "$cosmos_pid" 2>/dev/null; then
      echo "compat/js: the cosmos server exited:" >&2
      cat "$work/server-cosmos.log" >&2
      exit 1
    fi
    sleep 0.1
  done
fi

export TABLES_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;TableEndpoint=http://127.0.0.1:$port/devstoreaccount1;"
echo "compat/js: @azure/data-tables scenarios against $target on 127.0.0.1:$port"
status=0
node --test --test-concurrency=1 --test-reporter=spec "$@" test/*.test.js || status=$?
if [ -n "$tls_port" ]; then
  echo "compat/js: the https scenarios against $target on 127.0.0.1:$tls_port"
  TABLES_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;TableEndpoint=https://127.0.0.1:$tls_port/devstoreaccount1;" \
    NODE_EXTRA_CA_CERTS="$work/ca.pem" TABLES_TOKEN_KEY="$work/token-key.pem" \
    node --test --test-concurrency=1 --test-reporter=spec "$@" test-tls/*.test.js || status=$?
  if [ "$status" -ne 0 ] && [ -s "$work/server-tls.log" ]; then
    tail -n 20 "$work/server-tls.log" >&2
  fi
fi
if [ -n "$kit_port" ]; then
  echo "compat/js: the test kit scenarios against tablestore serve --testkit on 127.0.0.1:$kit_port"
  TABLES_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;TableEndpoint=http://127.0.0.1:$kit_port/devstoreaccount1;" \
    TABLES_TESTKIT_URL="http://127.0.0.1:$kit_admin/testkit" \
    node --test --test-concurrency=1 --test-reporter=spec "$@" test-testkit/*.test.js || status=$?
  if [ "$status" -ne 0 ] && [ -s "$work/server-kit.log" ]; then
    tail -n 20 "$work/server-kit.log" >&2
  fi
fi
if [ -n "$cosmos_port" ]; then
  echo "compat/js: the Cosmos DB scenarios against tablestore serve --cosmos on localhost:$cosmos_port"
  TABLES_COSMOS_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=localhost;AccountKey=C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==;TableEndpoint=http://localhost:$cosmos_port/;" \
    node --test --test-concurrency=1 --test-reporter=spec "$@" test-cosmos/*.test.js || status=$?
  if [ "$status" -ne 0 ] && [ -s "$work/server-cosmos.log" ]; then
    tail -n 20 "$work/server-cosmos.log" >&2
  fi
fi
if [ "$status" -ne 0 ] && [ -s "$work/server.log" ]; then
  echo "--- last lines of the $target log" >&2
  tail -n 40 "$work/server.log" >&2
fi
exit "$status"
