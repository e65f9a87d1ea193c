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
# Needs nginx (Debian: nginx-light), openssl, curl, python3 and /usr/bin/time (Debian: time). Everything it makes lives in a
# temporary directory, removed at the end; nginx listens on 127.0.0.1 only.
set -euo pipefail
old=$(realpath "${1:?old compare binary}")
new=$(realpath "${2:?new compare binary}")
rounds=${ROUNDS:-9}
port=${AB_PORT:-18443}
work=$(mktemp -d)
# nginx workers run as an unprivileged user: the files they serve must be readable to it.
chmod 755 "$work"
trap 'nginx -c "$work/nginx.conf" -s stop 2>/dev/null || true; [ -n "${AB_KEEP:-}" ] || rm -rf "$work"' EXIT

cd "$work"
mkdir -p www/obj logs
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem \
    -days 2 -subj "/CN=ab CA" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout leaf.key -out leaf.csr \
    -subj "/CN=localhost" 2>/dev/null
printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > ext.cnf
openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out leaf.pem -days 2 \
    -extfile ext.cnf 2>/dev/null
head -c 1073741824 /dev/urandom > www/obj/1073741824
head -c 1024 /dev/urandom > www/small
cat > nginx.conf <<EOF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/logs/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    keepalive_requests 100000;
    server {
        listen 127.0.0.1:$port ssl;
        ssl_certificate $work/leaf.pem;
        ssl_certificate_key $work/leaf.key;
        ssl_protocols TLSv1.2 TLSv1.3;
        root $work/www;
        types { }
        default_type application/octet-stream;
    }
}
EOF
nginx -c "$work/nginx.conf"
up=""
for _ in $(seq 1 50); do
    curl -fsS --cacert ca.pem "https://localhost:$port/small" -o /dev/null 2>/dev/null && up=yes && break
    sleep 0.1
done
if [ -z "$up" ]; then
    echo "nginx did not answer on 127.0.0.1:$port; its log:" >&2
    cat logs/error.log >&2
    exit 1
fi

export BENCH_CA="$(cat ca.pem)" BENCH_BASE="https://localhost:$port" BENCH_MIB=1024
export BENCH_URL="https://localhost:$port/small" BENCH_COLD_GAP_MS=0
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
