#!/bin/sh
# nightly.sh ENGINE N [ENGINE's options]: tonight's sweep on ENGINE (parallel: parallel.sh N
# [HOSTS [copy]]; slurm: slurm.sh N [CPUS]), merged, then compared with the last good night's
# merged sweep (fusebox compare): exits 1 when a figure of a point regressed beyond the seeds'
# noise (compare names it, and its page is NIGHTLY/compare/compare.html), 0 when none did or on
# the first night, 2 when the sweep could not be run or merged.
#
#   NIGHTLY  the folder that keeps the nights (default out/nightly), every node seeing it at
#            the same path for slurm: NIGHTLY/last, the last good night's merged sweep;
#            NIGHTLY/tonight, this run's. A night that did not regress becomes last; a night
#            that did stays in tonight for people to read, and last stays the baseline (a
#            regression never becomes the baseline).
#   SWEEP, FUSEBOX as in shard.sh. It runs from any folder: NIGHTLY and $SWEEP's paths are
#   relative to the working directory (the default sweep's, to the folder above contrib/), e.g.
#   from cron:
#     17 2 * * *  cd /srv/fusebox && NIGHTLY=/srv/nightly sh contrib/sweep/nightly.sh parallel 8
set -u
here=$(dirname "$0")
engine=${1:-}
case $engine in
parallel | slurm) shift ;;
*)
    echo "usage: nightly.sh parallel|slurm N [options of parallel.sh or slurm.sh]" >&2
    exit 2
    ;;
esac
nightly=${NIGHTLY:-out/nightly}
fusebox=${FUSEBOX:-fusebox}
mkdir -p "$nightly" || exit 2
rm -rf "$nightly/tonight" "$nightly/compare"
if ! OUT=$nightly/tonight sh "$here/$engine.sh" "$@"; then
    echo "nightly.sh: tonight's sweep on $engine failed: nothing compared, the baseline kept" >&2
    exit 2
fi
if [ ! -s "$nightly/last/sweep.json" ]; then
    mv "$nightly/tonight" "$nightly/last"
    echo "nightly.sh: the first night: $nightly/last is the baseline from now on"
    exit 0
fi
"$fusebox" compare "$nightly/last" "$nightly/tonight" -o "$nightly/compare"
rc=$?
case $rc in
0)
    rm -rf "$nightly/last"
    mv "$nightly/tonight" "$nightly/last"
    echo "nightly.sh: no regression against the last night; tonight is the baseline now"
    ;;
1)
    echo "nightly.sh: regressed against the last good night (above); tonight is kept in" \
        "$nightly/tonight, the baseline stays $nightly/last; open $nightly/compare/compare.html"
    ;;
*)
    echo "nightly.sh: fusebox compare could not compare the nights (exit $rc)" >&2
    rc=2
    ;;
esac
exit $rc
