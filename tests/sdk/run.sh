#!/usr/bin/env bash
# Smoke tests of the official SDKs against `opsdeck sandbox`: Ably (PyPI `ably` 3.x, npm `ably` 2.x,
# in MessagePack and JSON modes, REST and the realtime WebSocket), AvaTax (PyPI `avalara`, npm `avatax`), TaxJar (PyPI `taxjar` 2.x,
# npm `taxjar` 5.x), Mailgun (PyPI `mailgun` 1.x, npm `mailgun.js` 14 with `form-data`; both the
# US and the EU listener), EasyPost (PyPI `easypost` 10.x, npm `@easypost/api` 8; label files
# fetched over HTTP, batches waited for at the sandbox's real speed, webhooks received on loopback)
# and Coinbase Exchange (PyPI `cbpro` 1.1.4 in a venv of its own, since it pins a `requests` that no
# longer imports on Python 3.10+ and builds from an sdist needing `pkg_resources`; and ccxt's
# `coinbaseexchange` class, PyPI `ccxt` 4.5.90 and npm `ccxt` 4.5.84, with its `urls` set to the
# sandbox, and their `ccxt.pro` classes on the WebSocket feed: ticker, trades, the order book and
# the user's own orders; about 30 s to install all three from a cold cache, 3 s to run them) and Deepgram (PyPI
# `deepgram-sdk` 7.x, npm `@deepgram/sdk` 5.x, their environment's REST and ws:// URLs set to the
# sandbox: deepgram_{python.py,node.mjs} over REST, and deepgram_live_{python.py,node.mjs}, with the
# same installs, on live transcription over the `/v1/listen` WebSocket: speech streamed at real
# time with interim results, Finalize, raw mulaw, a tone with vad_events, a wrong key, KeepAlive;
# each script first resets the Deepgram simulator through the control port, since the REST ones
# delete a project; about 15 s to install both, 1 s to run the REST scripts, 10 s each live one).
#
#   bash tests/sdk/run.sh [path/to/opsdeck]     (default target/debug/opsdeck; builds nothing)
#
# Starts `opsdeck sandbox --port-base 0`, finds the Ably URL, installs each SDK into a temporary
# directory and runs tests/sdk/<service>_python.py and tests/sdk/<service>_node.mjs against it.
# Exit status: 0 when every SDK that could be installed passed; 1 when a check failed or the
# sandbox did not start. An SDK that cannot be installed (no python3/node, registry unreachable)
# prints "SKIPPED: could not install the <x> SDK" and does not fail the run, unless
# SDK_SMOKE_REQUIRE=1 is set. Every wait is bounded.
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

bin="${1:-target/debug/opsdeck}"
if [[ ! -x "$bin" && -x "$root/$bin" ]]; then
    bin="$root/$bin"
fi
if [[ ! -x "$bin" ]]; then
    echo "FAIL: no opsdeck binary at $bin (build it with: cargo build --locked --bin opsdeck)" >&2
    exit 1
fi

START_TIMEOUT=${SDK_SMOKE_START_TIMEOUT:-30}
INSTALL_TIMEOUT=${SDK_SMOKE_INSTALL_TIMEOUT:-300}
TEST_TIMEOUT=${SDK_SMOKE_TEST_TIMEOUT:-180}

tmp="$(mktemp -d "${TMPDIR:-/tmp}/opsdeck-sdk.XXXXXX")"
sandbox_pid=""

cleanup() {
    if [[ -n "$sandbox_pid" ]] && kill -0 "$sandbox_pid" 2>/dev/null; then
        kill -TERM "$sandbox_pid" 2>/dev/null
        for _ in $(seq 1 50); do
            kill -0 "$sandbox_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$sandbox_pid" 2>/dev/null
        wait "$sandbox_pid" 2>/dev/null
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# `timeout SECONDS CMD...`, also where coreutils' timeout is missing (macOS).
bounded() {
    local secs=$1
    shift
    if command -v timeout >/dev/null 2>&1; then
        if timeout --kill-after=10 1 true 2>/dev/null; then
            timeout --kill-after=10 "$secs" "$@"
        else
            timeout "$secs" "$@" # BusyBox
        fi
        return
    fi
    "$@" &
    local pid=$!
    # The watchdog polls, so it ends by itself within a second of the command.
    (
        for ((i = 0; i < secs; i++)); do
            kill -0 "$pid" 2>/dev/null || exit 0
            sleep 1
        done
        kill -TERM "$pid" 2>/dev/null
        for ((i = 0; i < 10; i++)); do
            kill -0 "$pid" 2>/dev/null || exit 0
            sleep 1
        done
        kill -KILL "$pid" 2>/dev/null
    ) &
    local watchdog=$!
    wait "$pid"
    local rc=$?
    wait "$watchdog" 2>/dev/null
    return $rc
}

elapsed() { echo "$((SECONDS - $1))s"; }

# --- the sandbox -------------------------------------------------------------------------------

"$bin" sandbox --port-base 0 >"$tmp/sandbox.out" 2>"$tmp/sandbox.err" &
sandbox_pid=$!

ably_url=""
control_url=""
deadline=$((SECONDS + START_TIMEOUT))
while ((SECONDS < deadline)); do
    if ! kill -0 "$sandbox_pid" 2>/dev/null; then
        echo "FAIL: opsdeck sandbox exited during start-up:" >&2
        cat "$tmp/sandbox.out" "$tmp/sandbox.err" >&2
        exit 1
    fi
    # The table: "ably   http://127.0.0.1:PORT   simulated   key ..."; the first line names the
    # control URL. Take the first match of each, whatever the column widths.
    ably_url="$(sed -nE 's/^[[:space:]]*ably[[:space:]]+(https?:\/\/[^[:space:]]+).*/\1/p' "$tmp/sandbox.out" | head -n 1)"
    control_url="$(grep -oE 'control[[:space:]]+https?://[^[:space:]]+' "$tmp/sandbox.out" | head -n 1 | sed -E 's/^control[[:space:]]+//')"
    [[ -n "$ably_url" ]] && break
    sleep 0.2
done
if [[ -z "$ably_url" ]]; then
    echo "FAIL: opsdeck sandbox printed no Ably URL within ${START_TIMEOUT}s:" >&2
    cat "$tmp/sandbox.out" "$tmp/sandbox.err" >&2
    exit 1
fi

# Prefer the control port's own answer when something here can read it.
if [[ -n "$control_url" ]] && command -v python3 >/dev/null 2>&1; then
    from_control="$(bounded 10 python3 - "$control_url" <<'PY' 2>/dev/null
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1].rstrip("/") + "/", timeout=5) as r:
    services = json.load(r)["services"]
print(next(s["base_url"] for s in services if s["service"] == "ably" and s["simulated"]))
PY
)"
    if [[ -n "$from_control" && "$from_control" != "$ably_url" ]]; then
        echo "FAIL: the table says Ably is at $ably_url, the control port says $from_control" >&2
        exit 1
    fi
fi
# The other simulated services, from the same table.
service_url() {
    sed -nE "s/^[[:space:]]*$1[[:space:]]+(https?:\/\/[^[:space:]]+).*/\1/p" "$tmp/sandbox.out" | head -n 1
}
taxjar_url="$(service_url taxjar)"
avatax_url="$(service_url avatax)"
# Mailgun has two listeners: "mailgun" (US) and "mailgun-eu" (the EU region's host).
mailgun_url="$(service_url mailgun)"
mailgun_eu_url="$(service_url mailgun-eu)"
easypost_url="$(service_url easypost)"
coinbase_url="$(service_url coinbase)"
deepgram_url="$(service_url deepgram)"
deepgram_simulated=0
if grep -qE '^[[:space:]]*deepgram[[:space:]]+https?://[^[:space:]]+[[:space:]]+simulated' "$tmp/sandbox.out"; then
    deepgram_simulated=1
fi
coinbase_simulated=0
if grep -qE '^[[:space:]]*coinbase[[:space:]]+https?://[^[:space:]]+[[:space:]]+simulated' "$tmp/sandbox.out"; then
    coinbase_simulated=1
fi
easypost_simulated=0
if grep -qE '^[[:space:]]*easypost[[:space:]]+https?://[^[:space:]]+[[:space:]]+simulated' "$tmp/sandbox.out"; then
    easypost_simulated=1
fi
mailgun_simulated=0
if grep -qE '^[[:space:]]*mailgun[[:space:]]+https?://[^[:space:]]+[[:space:]]+simulated' "$tmp/sandbox.out"; then
    mailgun_simulated=1
fi
# The control port names each listener's region too; prefer its answer for the EU URL.
if [[ -n "$control_url" ]] && command -v python3 >/dev/null 2>&1; then
    eu_from_control="$(bounded 10 python3 - "$control_url" <<'PY' 2>/dev/null
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1].rstrip("/") + "/", timeout=5) as r:
    services = json.load(r)["services"]
print(next(s["base_url"] for s in services
           if s["service"] == "mailgun-eu" or (s["service"] == "mailgun" and s.get("region") == "eu")))
PY
)"
    [[ -n "$eu_from_control" ]] && mailgun_eu_url="$eu_from_control"
fi
echo "opsdeck sandbox (pid $sandbox_pid): ably at $ably_url, avatax at $avatax_url, taxjar at $taxjar_url, mailgun at ${mailgun_url:-?} (EU ${mailgun_eu_url:-?}), easypost at ${easypost_url:-?}, coinbase at ${coinbase_url:-?}, deepgram at ${deepgram_url:-?}, control at ${control_url:-?}"

failed=0
skipped=0

skip() {
    echo "SKIPPED: could not install the $1 SDK${2:+ ($2)}"
    skipped=1
}

# One official SDK's checks: installs it (skipped with a note when its registry is unreachable),
# then runs its script against its service's URL.
# The venv is $tmp/venv unless PY_VENV names another; PIP_FLAGS adds pip options (both may be set
# for one call: `PY_VENV=... python_check ...`).
python_check() { # label, pip requirement, script, service URL[, second URL]
    local t0=$SECONDS
    local venv="${PY_VENV:-$tmp/venv}"
    local flags
    read -r -a flags <<<"${PIP_FLAGS:-}"
    if ! bounded "$INSTALL_TIMEOUT" "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        --no-input --timeout 20 --retries 2 ${flags[@]+"${flags[@]}"} "$2" >>"$tmp/pip.log" 2>&1; then
        tail -n 5 "$tmp/pip.log"
        skip "$1 Python" "pip install '$2' failed"
        return
    fi
    echo "installed $2 (Python) in $(elapsed "$t0")"
    t0=$SECONDS
    if bounded "$TEST_TIMEOUT" "$venv/bin/python" "$here/$3" "$4" ${5:+"$5"}; then
        echo "PASSED: $1 Python SDK ($(elapsed "$t0"))"
    else
        echo "FAILED: $1 Python SDK (see the FAIL line above)" >&2
        failed=1
    fi
}

node_check() { # label, npm package@range(s, space-separated), script, service URL, variable naming the install dir[, second URL]
    local t0=$SECONDS
    local packages
    read -r -a packages <<<"$2"
    if ! (cd "$tmp/node" && bounded "$INSTALL_TIMEOUT" npm install --no-audit --no-fund --no-update-notifier \
        --fetch-retries=1 --fetch-timeout=30000 --loglevel=error "${packages[@]}" >>"$tmp/npm.log" 2>&1); then
        tail -n 5 "$tmp/npm.log"
        skip "$1 Node" "npm install $2 failed"
        return
    fi
    echo "installed $2 (Node) in $(elapsed "$t0")"
    t0=$SECONDS
    if bounded "$TEST_TIMEOUT" env "$5=$tmp/node" node "$here/$3" "$4" ${6:+"$6"}; then
        echo "PASSED: $1 Node SDK ($(elapsed "$t0"))"
    else
        echo "FAILED: $1 Node SDK (see the FAIL line above)" >&2
        failed=1
    fi
}

# Mailgun's checks need both listeners and a simulator behind them; an opsdeck without the
# Mailgun simulator answers 501 everywhere, which is a skip, not an SDK failure.
mailgun_ready() {
    if [[ -z "$mailgun_url" || -z "$mailgun_eu_url" ]]; then
        skip Mailgun "the sandbox printed no mailgun / mailgun-eu URL"
        return 1
    fi
    if ((!mailgun_simulated)); then
        skip Mailgun "this opsdeck does not simulate Mailgun yet"
        return 1
    fi
}

# The same for EasyPost: no simulator behind the URL is a skip.
easypost_ready() {
    if [[ -z "$easypost_url" ]]; then
        skip EasyPost "the sandbox printed no easypost URL"
        return 1
    fi
    if ((!easypost_simulated)); then
        skip EasyPost "this opsdeck does not simulate EasyPost yet"
        return 1
    fi
}

# The same for Coinbase.
coinbase_ready() {
    if [[ -z "$coinbase_url" ]]; then
        skip Coinbase "the sandbox printed no coinbase URL"
        return 1
    fi
    if ((!coinbase_simulated)); then
        skip Coinbase "this opsdeck does not simulate Coinbase yet"
        return 1
    fi
}

# The same for Deepgram, whose scripts also need the control port (each resets the simulator
# first: both REST scripts delete a project, and the seeded account has two).
deepgram_ready() {
    if [[ -z "$deepgram_url" ]]; then
        skip Deepgram "the sandbox printed no deepgram URL"
        return 1
    fi
    if ((!deepgram_simulated)); then
        skip Deepgram "this opsdeck does not simulate Deepgram yet"
        return 1
    fi
    if [[ -z "$control_url" ]]; then
        skip Deepgram "the sandbox printed no control URL to reset the simulator with"
        return 1
    fi
}

# cbpro 1.1.4 pins requests 2.13 (which fails to import on Python 3.10+), six, websocket-client
# 0.40 and pymongo 3.5, and builds from an sdist whose setup.py imports pkg_resources (gone from
# the setuptools a build environment gets now). So it has a venv of its own: the current versions
# of what it imports, then cbpro itself without its pins and without build isolation.
cbpro_check() {
    local t0=$SECONDS
    local venv="$tmp/venv-cbpro"
    if ! bounded 120 python3 -m venv "$venv" >>"$tmp/venv.log" 2>&1 ||
        ! bounded "$INSTALL_TIMEOUT" "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
            --timeout 20 --retries 2 'setuptools<81' wheel 'requests>=2.32,<3' 'six>=1.16,<2' \
            'websocket-client>=1.8,<2' 'pymongo>=4,<5' 'sortedcontainers>=2.4,<3' >>"$tmp/pip.log" 2>&1; then
        tail -n 5 "$tmp/pip.log"
        skip "Coinbase (cbpro) Python" "could not prepare cbpro's dependencies"
        return
    fi
    echo "prepared cbpro's dependencies in $(elapsed "$t0")"
    PY_VENV="$venv" PIP_FLAGS="--no-deps --no-build-isolation" \
        python_check 'Coinbase (cbpro)' 'cbpro==1.1.4' coinbase_python.py "$coinbase_url"
}

run_python() {
    if ! command -v python3 >/dev/null 2>&1; then
        skip Python "no python3"
        return
    fi
    if ! bounded 120 python3 -m venv "$tmp/venv" >"$tmp/venv.log" 2>&1; then
        tail -n 5 "$tmp/venv.log"
        skip Python "python3 -m venv failed"
        return
    fi
    # msgpack comes with ably as a dependency.
    python_check Ably 'ably>=3,<4' ably_python.py "$ably_url" "$control_url"
    python_check AvaTax 'avalara>=26,<27' avatax_python.py "$avatax_url"
    python_check TaxJar 'taxjar>=2,<3' taxjar_python.py "$taxjar_url"
    if mailgun_ready; then
        python_check Mailgun 'mailgun>=1,<2' mailgun_python.py "$mailgun_url" "$mailgun_eu_url"
    fi
    if easypost_ready; then
        python_check EasyPost 'easypost>=10,<11' easypost_python.py "$easypost_url"
    fi
    if coinbase_ready; then
        cbpro_check
        python_check 'Coinbase (ccxt)' 'ccxt==4.5.90' coinbase_ccxt_python.py "$coinbase_url"
        python_check 'Coinbase feed (ccxt.pro)' 'ccxt==4.5.90' coinbase_feed_python.py "$coinbase_url"
    fi
    if deepgram_ready; then
        python_check Deepgram 'deepgram-sdk>=7,<8' deepgram_python.py "$deepgram_url" "$control_url"
        # The same venv and requirement: pip finds it satisfied and installs nothing.
        python_check 'Deepgram live' 'deepgram-sdk>=7,<8' deepgram_live_python.py "$deepgram_url" "$control_url"
    fi
}

run_node() {
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        skip Node "no node/npm"
        return
    fi
    mkdir -p "$tmp/node"
    echo '{"name":"opsdeck-sdk-smoke","private":true}' >"$tmp/node/package.json"
    node_check Ably ably@2 ably_node.mjs "$ably_url" ABLY_JS_DIR "$control_url"
    node_check AvaTax avatax@26 avatax_node.mjs "$avatax_url" AVATAX_JS_DIR
    node_check TaxJar taxjar@5 taxjar_node.mjs "$taxjar_url" TAXJAR_JS_DIR
    if mailgun_ready; then
        node_check Mailgun 'mailgun.js@14 form-data@4' mailgun_node.mjs "$mailgun_url" MAILGUN_JS_DIR "$mailgun_eu_url"
    fi
    if easypost_ready; then
        node_check EasyPost @easypost/api@8 easypost_node.mjs "$easypost_url" EASYPOST_JS_DIR
    fi
    if coinbase_ready; then
        node_check 'Coinbase (ccxt)' ccxt@4.5.84 coinbase_ccxt_node.mjs "$coinbase_url" CCXT_JS_DIR
        node_check 'Coinbase feed (ccxt.pro)' ccxt@4.5.84 coinbase_feed_node.mjs "$coinbase_url" CCXT_JS_DIR
    fi
    if deepgram_ready; then
        node_check Deepgram @deepgram/sdk@5 deepgram_node.mjs "$deepgram_url" DEEPGRAM_JS_DIR "$control_url"
        # The same node dir and package: npm finds it up to date and installs nothing.
        node_check 'Deepgram live' @deepgram/sdk@5 deepgram_live_node.mjs "$deepgram_url" DEEPGRAM_JS_DIR "$control_url"
    fi
}

run_python
run_node

if ! kill -0 "$sandbox_pid" 2>/dev/null; then
    echo "FAIL: opsdeck sandbox died during the tests:" >&2
    cat "$tmp/sandbox.err" >&2
    failed=1
fi

if ((failed)); then
    echo "SDK smoke tests: FAILED" >&2
    exit 1
fi
if ((skipped)) && [[ "${SDK_SMOKE_REQUIRE:-0}" == 1 ]]; then
    echo "SDK smoke tests: an SDK could not be installed and SDK_SMOKE_REQUIRE=1" >&2
    exit 1
fi
echo "SDK smoke tests: ok$( ((skipped)) && echo ' (some SDKs skipped)')"
