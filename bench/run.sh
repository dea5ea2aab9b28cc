#!/usr/bin/env bash
# Builds bench/fakeupstream and bench/load, starts the fake upstream and
# measures the floor (load -> fakeupstream directly), then the same set
# through the gateway when GATEWAY_URL and GATEWAY_KEY are set.
#
# Each set is: concurrency 1 and 64 without streaming, concurrency 1 with
# streaming. The output is printed and also kept in bench/results/.
#
# Environment:
#   FAKE_ADDR    fake upstream listen address (default 127.0.0.1:9100); a
#                gateway channel under test must point at http://$FAKE_ADDR
#   DURATION     length of each run (default 10s)
#   GATEWAY_URL  gateway base URL, e.g. http://127.0.0.1:3000 (optional)
#   GATEWAY_KEY  gateway token for the channel above (optional)
#   RESULTS_DIR  where the output is kept (default bench/results)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
FAKE_ADDR=${FAKE_ADDR:-127.0.0.1:9100}
DURATION=${DURATION:-10s}
RESULTS_DIR=${RESULTS_DIR:-$here/results}

tmp=$(mktemp -d)
fake_pid=""

cleanup() {
	if [[ -n $fake_pid ]]; then
		kill "$fake_pid" 2>/dev/null || true
		wait "$fake_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# build compiles both tools into the temp dir.
build() {
	(cd "$root" && go build -trimpath -o "$tmp/" ./bench/fakeupstream ./bench/load)
}

# start_fake starts the fake upstream and waits until it accepts connections.
start_fake() {
	"$tmp/fakeupstream" --addr "$FAKE_ADDR" 2>"$tmp/fakeupstream.log" &
	fake_pid=$!
	local host=${FAKE_ADDR%:*} port=${FAKE_ADDR##*:}
	for _ in $(seq 50); do
		if ! kill -0 "$fake_pid" 2>/dev/null; then
			echo "fakeupstream exited:" >&2
			cat "$tmp/fakeupstream.log" >&2
			fake_pid=""
			return 1
		fi
		if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	echo "fakeupstream did not start listening on $FAKE_ADDR" >&2
	return 1
}

# run_set URL [KEY]: the standard set of runs against URL. The fake
# upstream's counters are read around each run, so the "upstream" column
# shows the calls that reached it.
run_set() {
	local url=$1 key=${2:-}
	local args=(--url "$url" --duration "$DURATION" --stats-url "http://$FAKE_ADDR/__stats")
	if [[ -n $key ]]; then
		args+=(--key "$key")
	fi
	"$tmp/load" "${args[@]}" --sweep 1,64
	"$tmp/load" "${args[@]}" --concurrency 1 --stream
}

# floor: load -> fakeupstream directly, the cost of HTTP alone.
floor() {
	echo "== floor: load -> fakeupstream (http://$FAKE_ADDR)"
	run_set "http://$FAKE_ADDR"
}

# through_gateway: load -> gateway -> fakeupstream. Needs a running gateway
# at GATEWAY_URL with a channel pointing at http://$FAKE_ADDR and the token
# GATEWAY_KEY.
through_gateway() {
	if [[ -z ${GATEWAY_URL:-} || -z ${GATEWAY_KEY:-} ]]; then
		echo "== through gateway: skipped (set GATEWAY_URL and GATEWAY_KEY; see bench/README.md)"
		return 0
	fi
	echo "== through gateway: load -> $GATEWAY_URL -> fakeupstream (http://$FAKE_ADDR)"
	run_set "$GATEWAY_URL" "$GATEWAY_KEY"
}

# machine prints what the figures depend on.
machine() {
	echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -sm), $(nproc) cores," \
		"$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || echo 'unknown CPU')," \
		"$(go version | cut -d' ' -f3), runs of $DURATION"
}

main() {
	build
	start_fake
	mkdir -p "$RESULTS_DIR"
	local out
	out="$RESULTS_DIR/run-$(date -u +%Y%m%dT%H%M%SZ).txt"
	{
		machine
		floor
		through_gateway
	} 2>&1 | tee "$out"
	echo "(kept in $out)"
}

main "$@"
