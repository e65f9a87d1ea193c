#!/usr/bin/env bash
# A/B of two builds of the compare benchmark's client (e.g. the runtime before and after a
# change), interleaved, against nginx in its own process on 127.0.0.1: single-stream and 8-way
# 1 GiB downloads (Gb/s and the client process's CPU seconds) and cold start (client
# construction, first request), per provider (AB_PROVIDERS, default all three), ROUNDS rounds
# (default 9). Prints medians
# (min–max) and the new/old ratios as markdown.
#
#   cargo bench --no-run -p smithy-tls-bench --bench compare            # in each checkout
#   bench/ab-separate-process.sh OLD_COMPARE_BINARY NEW_COMPARE_BINARY
#
# Needs nginx (Debian: nginx-light), python3 and /usr/bin/time (Debian: time). nginx is the
# compare benchmark's own nginx server (NEW_COMPARE_BINARY --server nginx: the same certificate
# code and configuration as the benchmark's tables), on 127.0.0.1 only, stopped at the end.
set -euo pipefail
old=$(realpath "${1:?old compare binary}")
new=$(realpath "${2:?new compare binary}")
rounds=${ROUNDS:-9}
work=$(mktemp -d)
# Closing the server's standard input stops it (and nginx with it) and removes its files.
stop() {
    if [ -n "${server_pid:-}" ]; then
        eval "exec ${server_in}>&-" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap stop EXIT

cd "$work"
# The server serves /obj/<BENCH_MIB MiB> and /obj/1024, and prints its ports and CA, then END.
export BENCH_MIB=1024
coproc server { exec "$new" --server nginx; }
server_pid=$server_PID server_in=${server[1]}
read -r first <&"${server[0]}"
ca=""
while read -r line <&"${server[0]}" && [ "$line" != END ]; do ca+="$line"$'\n'; done
port=$(sed -n 's/.* h1=127\.0\.0\.1:\([0-9]*\).*/\1/p' <<<"$first")
[ -n "$port" ] || { echo "the nginx server did not start: $first" >&2; exit 1; }
# Clients trust only the server's CA.
unset AWS_CA_BUNDLE SSL_CERT_FILE

export BENCH_CA="$ca" BENCH_BASE="https://localhost:$port"
export BENCH_URL="https://localhost:$port/obj/1024" BENCH_COLD_GAP_MS=0
for round in $(seq 1 "$rounds"); do
    # Which build goes first alternates by round, so neither always runs on a warmer machine.
    order="old new"; [ $((round % 2)) -eq 0 ] && order="new old"
    for p in ${AB_PROVIDERS:-rustls-aws-lc rustls-ring s2n-tls}; do
        for streams in 1 8; do
            for which in $order; do
                bin=$old; [ "$which" = new ] && bin=$new
                line=$(/usr/bin/time -f "CPU %U %S" "$bin" --download "ours $p" "$streams" 2>&1 | grep -E "DOWNLOAD|CPU" | tr '\n' ' ')
                echo "dl $which $p $streams $round $line"
            done
        done
        for which in $order; do
            bin=$old; [ "$which" = new ] && bin=$new
            echo "cold $which $p $round $("$bin" --cold-start "ours $p" 2>&1 | grep COLD)"
        done
    done
done > results.txt

python3 - results.txt <<'PY'
import re, statistics as st, sys
dl, cold = {}, {}
for r in (l.split() for l in open(sys.argv[1])):
    text = " ".join(r)
    if r[0] == "dl":
        cpu = re.search(r"CPU ([\d.]+) ([\d.]+)", text)
        dl.setdefault((r[2], r[3], r[1]), []).append(
            (float(re.search(r"gbps=([\d.]+)", text).group(1)), float(cpu.group(1)) + float(cpu.group(2))))
    elif r[0] == "cold":
        cold.setdefault((r[2], r[1]), []).append(
            (int(re.search(r"construct_us=(\d+)", text).group(1)), int(re.search(r"first_request_us=(\d+)", text).group(1)) / 1000))
def show(xs, fmt="{:.2f}"):
    return f"{fmt.format(st.median(xs))} ({fmt.format(min(xs))}–{fmt.format(max(xs))})"
print("| provider | streams | Gb/s old | Gb/s new | new/old | client CPU s old | new | new/old |")
print("|---|---|---|---|---|---|---|---|")
providers = sorted({k[0] for k in dl})
for p in providers:
    for s in ["1", "8"]:
        o, n = dl[(p, s, "old")], dl[(p, s, "new")]
        og, ng, oc, nc = [x[0] for x in o], [x[0] for x in n], [x[1] for x in o], [x[1] for x in n]
        print(f"| {p} | {s} | {show(og)} | {show(ng)} | {st.median(ng)/st.median(og):.2f} | {show(oc)} | {show(nc)} | {st.median(nc)/st.median(oc):.2f} |")
print()
print("| provider | construct µs old | new | first request ms old | new | new/old |")
print("|---|---|---|---|---|---|")
for p in providers:
    o, n = cold[(p, "old")], cold[(p, "new")]
    of, nf = [x[1] for x in o], [x[1] for x in n]
    print(f"| {p} | {st.median([x[0] for x in o])} | {st.median([x[0] for x in n])} | {show(of)} | {show(nf)} | {st.median(nf)/st.median(of):.2f} |")
PY
