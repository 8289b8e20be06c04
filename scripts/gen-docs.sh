#!/bin/sh
# gen-docs.sh regenerates the generated reference and the figures in docs/.
# Run it from anywhere in the repository: scripts/gen-docs.sh
# Every figure is deterministic: the same commit gives the same bytes.
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/simrun" ./cmd/simrun
simrun="$tmp/simrun"
mkdir -p docs

# The reference (docs/reference/*.md), written from the registries:
# properties, fault kinds, algorithms, process kinds, the catalogue and the
# command line. TestReferenceDocsAreCurrent fails while it is stale.
"$simrun" docs >/dev/null

# Kleppmann's Redlock example, one run: who believed what, which node held
# which key, C's clock jump, the violation windows.
"$simrun" run redlock-clock-jump --out "$tmp/run" >/dev/null
cp "$tmp/run/timeline.png" docs/timeline-redlock-clock-jump.png
cp "$tmp/run/timeline.svg" docs/timeline-redlock-clock-jump.svg
cp "$tmp/run/clocks.png" docs/clocks-redlock-clock-jump.png

# How far must C's clock jump? 25 jump sizes, 100 seeds each.
"$simrun" sweep redlock-clock-jump --param 'faults[1].by=0s..12s/25' --seeds 100 --quiet --out "$tmp/sweep" \
  --label 'faults[1].by=clock jump of C' --reference '5s=ttl - hold' >/dev/null
cp "$tmp/sweep/sweep.png" docs/sweep-redlock-clock-jump.png
cp "$tmp/sweep/sweep.svg" docs/sweep-redlock-clock-jump.svg

# The same against c1's ttl: the envelope ends where the jump exceeds
# ttl - hold.
"$simrun" sweep redlock-clock-jump --param 'faults[1].by=0s..20s/11' --param 'clients[0].lock.ttl=5s,10s,15s,20s' --seeds 50 --quiet --out "$tmp/sweep2" \
  --label 'faults[1].by=clock jump of C' --label "clients[0].lock.ttl=c1's ttl" >/dev/null
cp "$tmp/sweep2/sweep.png" docs/sweep-redlock-jump-vs-ttl.png

# Which lock should we use? Every algorithm against every fault family.
"$simrun" matrix --quiet --out "$tmp/matrix" >/dev/null
cp "$tmp/matrix/matrix.png" docs/matrix.png
cp "$tmp/matrix/matrix.md" docs/matrix.md

echo "docs/ regenerated"
