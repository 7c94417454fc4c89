#!/usr/bin/env bash
# backup-ab.sh: the cost of continuous backup on synced single inserts,
# measured in interleaved rounds. Each round runs the root package's
# BenchmarkContinuousBackup cases once each, backup off, on and on with
# background sync (and, with a second device, on with the backup there),
# one after the other, so the disk's latency drifting from minute to
# minute moves every mode alike. It prints each mode's median time per
# insert and its ratio to "off" (speed with backup over speed without).
#
#   bash bench/backup-ab.sh [ROUNDS [WRITERS [OTHER_DEVICE_DIR]]]
#
# ROUNDS defaults to 8 and WRITERS to 8 (1 or 8). OTHER_DEVICE_DIR, for
# example /dev/shm, adds the mode "on-other-device": the default mode
# with the backup directory on that device.
set -euo pipefail

rounds=${1:-8}
writers=${2:-8}
other=${3:-}
case "$rounds" in '' | *[!0-9]* | 0)
	echo "backup-ab.sh: ROUNDS must be a positive whole number, not '$rounds'" >&2
	exit 2
	;;
esac
case "$writers" in 1 | 8) ;; *)
	echo "backup-ab.sh: WRITERS must be 1 or 8 (the benchmark's cases), not '$writers'" >&2
	exit 2
	;;
esac
if [ -n "$other" ] && [ ! -d "$other" ]; then
	echo "backup-ab.sh: OTHER_DEVICE_DIR '$other' is not a directory" >&2
	exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$root" && go test -c -o "$work/tablestore.test" .)
n=2000
if [ "$writers" = 8 ]; then n=3000; fi

one() { # mode bench-mode [dir]
	local out
	out=$(cd "$work" && TABLESTORE_BACKUP_BENCH_DIR=${3:-} ./tablestore.test -test.run XXX \
		-test.bench "ContinuousBackup/synced-inserts-${writers}w/backup-$2\$" -test.benchtime "${n}x" |
		awk '/^Benchmark/ {print $3}')
	echo "$1 $out" >>"$work/times"
}

echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
	one off off
	one on on
	one bgsync bgsync
	if [ -n "$other" ]; then one on-other-device on "$other"; fi
	echo "round $r of $rounds done"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

# The median of each mode, and its ratio of speeds to off's.
sort -k1,1 -k2,2n "$work/times" | awk -v w="$writers" '
	{ t[$1] = t[$1] " " $2; c[$1]++ }
	END {
		for (m in t) {
			n = split(substr(t[m], 2), v, " ")
			med[m] = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		}
		printf "%d writer(s), %d rounds, median ns per insert:\n", w, c["off"]
		split("off on bgsync on-other-device", order, " ")
		for (i = 1; i <= 4; i++) {
			m = order[i]
			if (!(m in med))
				continue
			printf "  %-16s %9.0f ns   %.2fx of off   (rounds:%s)\n", m, med[m], med["off"] / med[m], t[m]
		}
	}'
