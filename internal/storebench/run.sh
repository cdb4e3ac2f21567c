#!/usr/bin/env bash
# Runs every measurement in docs/durability-store.md, niced, one process
# per step (so recovery starts cold in memory, warm in the page cache).
#   internal/storebench/run.sh [results-file]
set -euo pipefail
cd "$(dirname "$0")"
out="${1:-/dev/stdout}"
bin=$(mktemp -d)/storebench
go build -o "$bin" .
run() { nice -n 10 "$bin" "$@" 2>>"$out.stderr" | tee -a "$out"; }
work=$(mktemp -d)
trap 'rm -rf "$work" "$(dirname "$bin")"' EXIT
stores="${STORES:-oplog pebble bbolt sqlite}"
phases="${PHASES:-throughput tmpfs fill churn}"
has() { case " $phases " in *" $1 "*) return 0;; esac; return 1; }

# Repeated and interleaved: fsync latency here moves with the other jobs.
has throughput && for _ in $(seq "${REPS:-3}"); do
  for body in 64 1024; do
    for w in 8 64; do
      for s in $stores; do run -store "$s" -test throughput -writers "$w" -body "$body" -dur "${DUR:-8s}"; done
    done
  done
done

# The same on tmpfs, where an fsync costs next to nothing: what each store
# costs in CPU per durable record, which a fast disk exposes.
has tmpfs && for _ in $(seq "${REPS:-3}"); do
  for body in 64 1024; do
    for s in $stores; do
      shm=$(mktemp -d -p /dev/shm)
      run -store "$s" -test throughput -writers 64 -body "$body" -dur "${DUR:-8s}" -dir "$shm" -label tmpfs
      rm -rf "$shm"
    done
  done
done

# fsyncs per commit where the store's own count is not reachable (bbolt,
# SQLite count group commits): strace counts the calls on a short run.
has throughput && for s in bbolt sqlite; do
  case " $stores " in *" $s "*)
    strace -f -c -e trace=fsync,fdatasync -o "$work/strace-$s" "$bin" -store "$s" -writers 8 -dur 2s | tee -a "$out"
    grep -E 'fsync|fdatasync|total' "$work/strace-$s" | sed "s/^/strace $s: /" | tee -a "$out";;
  esac
done

has fill && for body in 64 1024; do
  for s in $stores; do
    rm -rf "$work/d"; mkdir "$work/d"
    run -store "$s" -test fill -n "${N:-1000000}" -body "$body" -dir "$work/d"
    for _ in 1 2 3; do run -store "$s" -test recover -dir "$work/d"; done
    if [ "$s" = oplog ]; then
      rm -rf "$work/d"; mkdir "$work/d"
      run -store "$s" -test fill -n "${N:-1000000}" -body "$body" -dir "$work/d" -compact
      for _ in 1 2 3; do run -store "$s" -test recover -dir "$work/d"; done
    fi
  done
done
rm -rf "$work/d"

has churn && for s in $stores; do
  rm -rf "$work/c"; mkdir "$work/c"
  run -store "$s" -test churn -n "${CHURN:-10000000}" -body 64 -dir "$work/c"
done
