#!/usr/bin/env bash
# Builds the bench tools, starts the fake upstream, a bare hop and the
# gateway, then measures in rounds: the floor (load -> fakeupstream
# directly), one bare hop (load -> hop -> fakeupstream) and the gateway,
# back to back. The targets are checked on the median over the rounds of
# each round's comparison with its own floor, so that a slow minute of the
# machine shifts all three sets alike. Last, it checks the gateway's books.
#
# A round runs two kinds of set: concurrency 1 and 64 without streaming,
# then concurrency 1 with streaming. Each kind runs on the three paths back
# to back, so that the figures compared are taken seconds apart, in an
# order that turns round every round (floor, hop, gateway, then gateway,
# hop, floor): a machine that slows down or speeds up during a round
# favours no path. The output is printed and also kept in bench/results/.
#
# Environment:
#   FAKE_ADDR    fake upstream listen address (default 127.0.0.1:9100); a
#                gateway channel under test must point at http://$FAKE_ADDR
#   DURATION     length of each run (default 10s)
#   ROUNDS       rounds of floor, hop and gateway (default 4: an even number
#                runs each order as often)
#   WARMUP       length of the warm-up run on each before the rounds (default 2s)
#   GATEWAY_URL  a running gateway to measure, e.g. http://127.0.0.1:3000;
#                unset: the script builds the gateway, starts it on a fresh
#                data file (durable default mode) and sets it up with gwctl
#   GATEWAY_KEY  token of a running gateway's channel pointing at the fake
#   GATEWAY_ARGS extra flags for the gateway the script starts (e.g. --sync 5ms)
#   HOP_ADDR     listen address of the bare hop (default 127.0.0.1:9200)
#   SWEEP        concurrencies of the accounting check (default 1,8,64,256)
#   RESULTS_DIR  where the output is kept (default bench/results)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
FAKE_ADDR=${FAKE_ADDR:-127.0.0.1:9100}
DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-4}
RESULTS_DIR=${RESULTS_DIR:-$here/results}

SWEEP=${SWEEP:-1,8,64,256}

tmp=$(mktemp -d)
fake_pid=""
gw_pid=""
hop_pid=""

cleanup() {
	for pid in $fake_pid $gw_pid $hop_pid; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# build compiles the bench tools into the temp dir.
build() {
	(cd "$root" && go build -trimpath -o "$tmp/" ./bench/fakeupstream ./bench/load ./bench/gwctl ./bench/hop ./bench/targets)
}

# start_fake starts the fake upstream and waits until it accepts connections.
start_fake() {
	"$tmp/fakeupstream" --addr "$FAKE_ADDR" 2>"$tmp/fakeupstream.log" &
	fake_pid=$!
	wait_listen "$FAKE_ADDR" "$fake_pid" fakeupstream "$tmp/fakeupstream.log"
}

# run_set KIND NAME ROUND URL [KEY]: one kind of set against URL, kept as
# $tmp/rounds/r<ROUND>-<NAME>-<KIND>.json for the targets: plain is
# concurrency 1 and 64 without streaming, stream concurrency 1 with
# streaming. The fake upstream's counters are read around each run, so the
# "upstream" column shows the calls that reached it.
run_set() {
	local kind=$1 name=$2 round=$3 url=$4 key=${5:-}
	local args=(--url "$url" --duration "$DURATION" --stats-url "http://$FAKE_ADDR/__stats")
	if [[ -n $key ]]; then
		args+=(--key "$key")
	fi
	if [[ $kind == plain ]]; then
		args+=(--sweep 1,64)
	else
		args+=(--concurrency 1 --stream)
	fi
	local before
	before=$(cpu_times)
	"$tmp/load" "${args[@]}" --out "$tmp/rounds/r$round-$name-$kind.json"
	steal_since "$before"
}

# cpu_times prints the machine's total and stolen CPU ticks.
cpu_times() {
	awk '/^cpu /{t=0; for (i=2; i<=NF; i++) t+=$i; print t, $9}' /proc/stat 2>/dev/null || echo "0 0"
}

# steal_since BEFORE prints the share of CPU time the hypervisor gave to
# other guests since BEFORE: figures taken while it is high are not
# comparable with quiet ones.
steal_since() {
	local t0 s0 t1 s1
	read -r t0 s0 <<<"$1"
	read -r t1 s1 <<<"$(cpu_times)"
	if ((t1 > t0)); then
		echo "cpu steal during this set: $(((s1 - s0) * 100 / (t1 - t0)))%"
	fi
}

# wait_listen ADDR PID NAME LOG: wait until ADDR accepts connections.
wait_listen() {
	local addr=$1 pid=$2 name=$3 log=$4
	for _ in $(seq 100); do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "$name exited:" >&2
			cat "$log" >&2
			return 1
		fi
		if (exec 3<>"/dev/tcp/${addr%:*}/${addr##*:}") 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	echo "$name did not start listening on $addr" >&2
	return 1
}

# start_hop starts the do-nothing forwarder (load -> hop -> fakeupstream):
# what one extra process hop costs by itself.
start_hop() {
	HOP_ADDR=${HOP_ADDR:-127.0.0.1:9200}
	"$tmp/hop" --addr "$HOP_ADDR" --to "http://$FAKE_ADDR" 2>"$tmp/hop.log" &
	hop_pid=$!
	wait_listen "$HOP_ADDR" "$hop_pid" hop "$tmp/hop.log"
}

# start_gateway builds the gateway, starts it on a fresh data file and
# creates a channel pointing at the fake and an unlimited token.
start_gateway() {
	(cd "$root" && go build -trimpath -o "$tmp/gateway" .)
	local port=${GATEWAY_PORT:-3900}
	# The script's own GATEWAY_ variables are not the gateway's settings: it
	# would warn of each one exported.
	env -u GATEWAY_URL -u GATEWAY_KEY -u GATEWAY_ARGS -u GATEWAY_PORT \
		GATEWAY_API_RATE_LIMIT=0 GATEWAY_CRITICAL_RATE_LIMIT=0 "$tmp/gateway" --addr "127.0.0.1:$port" \
		--data "$tmp/gw/gateway.db" --allow-private-upstreams --log-level warn ${GATEWAY_ARGS:-} >"$tmp/gateway.log" 2>&1 &
	gw_pid=$!
	GATEWAY_URL="http://127.0.0.1:$port"
	for _ in $(seq 100); do
		if curl -fsS "$GATEWAY_URL/api/status" >/dev/null 2>&1; then
			GATEWAY_KEY=$("$tmp/gwctl" setup --url "$GATEWAY_URL" --upstream "http://$FAKE_ADDR")
			return 0
		fi
		sleep 0.1
	done
	echo "gateway did not start:" >&2
	cat "$tmp/gateway.log" >&2
	return 1
}

# rounds measures the floor, the hop and the gateway ROUNDS times, then
# checks the targets.
rounds() {
	mkdir -p "$tmp/rounds"
	echo "== warm-up: ${WARMUP:-2s} at concurrency 8 on each of the three"
	"$tmp/load" --url "http://$FAKE_ADDR" --concurrency 8 --duration "${WARMUP:-2s}" >/dev/null 2>&1
	"$tmp/load" --url "http://$HOP_ADDR" --concurrency 8 --duration "${WARMUP:-2s}" >/dev/null 2>&1
	"$tmp/load" --url "$GATEWAY_URL" --key "$GATEWAY_KEY" --concurrency 8 --duration "${WARMUP:-2s}" >/dev/null 2>&1
	local r kind path order
	for r in $(seq "$ROUNDS"); do
		order="floor hop gateway"
		if ((r % 2 == 0)); then
			order="gateway hop floor"
		fi
		for kind in plain stream; do
			for path in $order; do
				case $path in
				floor)
					echo "== round $r/$ROUNDS, $kind, floor: load -> fakeupstream (http://$FAKE_ADDR)"
					run_set "$kind" floor "$r" "http://$FAKE_ADDR"
					;;
				hop)
					echo "== round $r/$ROUNDS, $kind, one bare hop: load -> hop (http://$HOP_ADDR) -> fakeupstream"
					run_set "$kind" hop "$r" "http://$HOP_ADDR"
					;;
				gateway)
					echo "== round $r/$ROUNDS, $kind, gateway: load -> $GATEWAY_URL -> fakeupstream (http://$FAKE_ADDR) ${GATEWAY_ARGS:-}"
					run_set "$kind" gateway "$r" "$GATEWAY_URL" "$GATEWAY_KEY"
					;;
				esac
			done
		done
	done
	"$tmp/targets" "$tmp/rounds"
}

# accounting: over a sweep of concurrencies, requests sent == upstream
# calls == log rows == charges, and used quota == the sum of the logs'
# quota.
accounting() {
	echo "== accounting check over concurrencies $SWEEP"
	local stats="http://$FAKE_ADDR/__stats"
	"$tmp/gwctl" account --url "$GATEWAY_URL" --stats-url "$stats" >"$tmp/before.json"
	"$tmp/load" --url "$GATEWAY_URL" --key "$GATEWAY_KEY" --sweep "$SWEEP" --duration "${SWEEP_DURATION:-3s}" \
		--stats-url "$stats" --json >"$tmp/sweep.json"
	"$tmp/load" --url "$GATEWAY_URL" --key "$GATEWAY_KEY" --sweep "$SWEEP" --duration "${SWEEP_DURATION:-3s}" --stream \
		--stats-url "$stats" --json >"$tmp/sweep-stream.json"
	"$tmp/gwctl" verify --url "$GATEWAY_URL" --stats-url "$stats" --before "$tmp/before.json" --load "$tmp/sweep.json,$tmp/sweep-stream.json"
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
	start_hop
	if [[ -z ${GATEWAY_URL:-} ]]; then
		start_gateway
	elif [[ -z ${GATEWAY_KEY:-} ]]; then
		echo "GATEWAY_URL is set but GATEWAY_KEY is not" >&2
		return 1
	fi
	mkdir -p "$RESULTS_DIR"
	local out
	out="$RESULTS_DIR/run-$(date -u +%Y%m%dT%H%M%SZ).txt"
	{
		machine
		rounds
		accounting
	} 2>&1 | tee "$out"
	echo "(kept in $out)"
}

main "$@"
