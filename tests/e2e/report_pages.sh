#!/bin/sh
# tests/e2e/report_pages.sh - report.html and sweep.html as a reader gets them (issue 15): the
# sections exist (verdict, per-class view, settings in effect), the page is byte-identical
# for the same scenario and seed, the breakers chart has no empty panel, a feature's chart
# (limits, connections, pods, re-submissions, the breaker store's outages) and its summary rows
# appear exactly when the scenario uses it, and in headless Chromium (Debian's chromium) at
# 1,000 and 1,600 px wide nothing is cut off (the flagship's page, a fleet scenario's, the sweep's).
#
# "Cut off" is measured, not eyeballed: a copy of each page gets a small script that writes,
# into the DOM, the window's width, the document's scrollWidth, and every table box
# (div.scroll) or chart image wider than the room it has; `chromium --dump-dom` prints the
# result. The page passes when the document is no wider than the window and nothing is
# listed. Screenshots at both widths are kept in out/e2e-report_pages/ for a person to look
# at. The pages are the same under asan, so the asan run skips the suite; without chromium
# (not installable here) the browser checks skip with the reason.
. tests/tap.sh
T=$E2E_TMP
L=$(logs_dir report_pages)

case "${BUILD:-}" in
*asan*)
    skip "report pages in headless chromium" "the pages are the same bytes as the release run's"
    finish
    exit 0
    ;;
esac

# ---- the pages: sections, determinism, no empty panel (no browser needed) ----

"$FUSEBOX" run scenarios/retry-storm.json -o "$T/rs" >"$L/run.log" 2>&1
ok $? "fusebox run writes the flagship's report"
PAGE=$(cat "$T/rs/report.html" 2>/dev/null)
for id in verdict variants summary classes providers spillover charts files; do
    contains "$PAGE" "id=\"$id\"" "report.html has the section #$id"
done
contains "$PAGE" "tuned does best against naive on success rate (99.91% against 62.67%)" \
    "the verdict names the winner with the run's figures"
contains "$PAGE" "its fallback served 12.18% of requests" "the verdict says what the fallback served"
contains "$PAGE" "account never calls an LLM" "the verdict names the collateral damage"
contains "$PAGE" "retry: 1000 attempts (999 retries); backoff none" \
    "the variants show their settings in effect"
contains "$PAGE" "openai: breaker opens at 50% failed within 30.0s (at least 20 calls), open 30.0s" \
    "a breaker's settings are shown with the scenario's values"
contains "$PAGE" "retry budget: token bucket of 10 tokens" "the retry budget is shown"
contains "$PAGE" "<td>account</td>" "the per-class table lists the class that calls no LLM"
contains "$PAGE" "id=\"chart-classes\"" "report.html has the per-class chart"
check "the per-class chart's data has the flagship's classes" \
    grep -q '^"account" 23.029238 34.603007 0.000000 0.200703$' "$T/rs/charts/classes.dat"
contains "$(cat "$L/run.log")" "tuned does best against naive on success rate (99.91% against 62.67%)" \
    "fusebox run prints the verdict below its table"
# more than two variants: the comparison is a table, the best of each column marked
"$FUSEBOX" run scenarios/thundering-herd.json -o "$T/th" >"$L/th.log" 2>&1
ok $? "fusebox run writes a five-variant report"
contains "$(cat "$T/th/report.html")" '<table class="verdict">' "report.html's verdict is a table with five variants"
contains "$(cat "$T/th/report.html")" '<td class="n best" title="the best"><b>100.00% *</b></td>' \
    "... the best of a column marked"
ok $(grep -q "does best" "$T/th/report.html" && echo 1 || echo 0) "... and no 'does best' sentences"
contains "$(cat "$L/th.log")" "decorrelated             100.00%*" "fusebox run prints the table, the best marked"

"$FUSEBOX" run tests/e2e/sweep-small.json -o "$T/a" -q >/dev/null 2>&1 &&
    "$FUSEBOX" run tests/e2e/sweep-small.json -o "$T/b" -q >/dev/null 2>&1
check "report.html is byte-identical for the same scenario and seed" \
    cmp "$T/a/report.html" "$T/b/report.html"
# sweep-small: naive has no breaker, tuned has one: one panel, tuned's
check "the breakers chart has a panel only for the variant with a breaker" \
    grep -q "multiplot layout 1,1" "$T/a/charts/breakers.gp"
"$FUSEBOX" run tests/e2e/sweep-small.json -o "$T/nobreaker" -q --variant naive >/dev/null 2>&1
check "a run where no variant has a breaker has no breakers chart" \
    sh -c "[ ! -e '$T/nobreaker/charts/breakers.gp' ] && ! grep -q chart-breakers '$T/nobreaker/report.html'"

"$FUSEBOX" sweep tests/e2e/sweep-small.json --grid breaker.open=5s,20s \
    --grid breaker.failure_rate=0.3,0.6 --seeds 3 -o "$T/sw" >"$L/sweep.log" 2>&1
ok $? "fusebox sweep writes a sweep page"
# the heatmap's colours span at least 4 CI half-widths of its cells (here every point; the
# CSV's 3 decimals round them)
check "the sweep heatmap's colour scale is no narrower than the seeds' intervals" python3 -c "
import csv, re, sys
rows = list(csv.DictReader(open('$T/sw/sweep-points.csv')))
m = [float(r['blast_radius']) for r in rows]
half = sum((float(r['blast_radius_ci_high']) - float(r['blast_radius_ci_low'])) / 2
           for r in rows) / len(rows)
need = 4 * half
cb = re.search(r'set cbrange \[([-0-9.e+]+):([-0-9.e+]+)\]', open('$T/sw/charts/heatmap.gp').read())
if max(m) - min(m) >= need:
    sys.exit(1 if cb else 0)
lo, hi = float(cb.group(1)), float(cb.group(2))
print('means', min(m), max(m), 'need', need, 'range', lo, hi)
sys.exit(0 if abs((hi - lo) - need) <= 1e-3 * need and lo >= 0 and lo <= min(m) and hi >= max(m) else 1)"
contains "$(cat "$T/sw/charts/heatmap.gp")" "~ = not distinguishable from the best feasible cell" \
    "the heatmap marks the cells level with the best"

# ---- the features' charts and summary rows: exactly when a scenario uses the feature ----

# feature_run SCENARIO CHART ROW: the run draws CHART (and no other feature's chart), its page
# shows it with its caption, and its text summary has ROW
feature_run() {
    "$FUSEBOX" run "scenarios/$1.json" -o "$T/$1" >"$L/$1.log" 2>&1
    ok $? "fusebox run $1"
    have=$(cd "$T/$1/charts" && ls limits.gp connections.gp pods.gp resubmissions.gp 2>/dev/null |
        tr '\n' ' ')
    check "$1 draws the $2 chart and no other feature's" [ "$have" = "$2.gp " ]
    contains "$(cat "$T/$1/report.html")" "id=\"chart-$2\"" "$1's page shows the $2 chart"
    contains "$(cat "$L/$1.log")" "$3" "$1's text summary has its '$3' row"
}
# (tests/unit/test_charts.c checks every feature on a synthetic run; here two real ones, a
# variant without a limit leaving its CSV cells empty, at a few seconds of CI)
feature_run adaptive-concurrency limits "limit rejections"
feature_run autoscale-storm pods "pods peak"
"$FUSEBOX" run scenarios/store-outage.json -o "$T/so" >"$L/store-outage.log" 2>&1
ok $? "fusebox run store-outage"
# store-outage's feature is an overlay; the flagship uses none: no feature chart, no feature row
check "store-outage draws no feature's chart" \
    sh -c "! ls '$T/so/charts' | grep -qE '^(limits|connections|pods|resubmissions)\\.'"
check "the flagship draws no feature's chart" \
    sh -c "! ls '$T/rs/charts' | grep -qE '^(limits|connections|pods|resubmissions)\\.'"
check "the flagship's summary has no feature row" \
    sh -c "! grep -qE '^(limit rejections|connection waits|pods peak|re-submissions|store unreachable) ' '$L/run.log'"
check "store-outage's breakers chart hatches the store's outages" \
    grep -q "'store_down_pct' with filledcurves" "$T/so/charts/breakers.gp"
check "the flagship's breakers chart has no store band" \
    sh -c "! grep -q store_down_pct '$T/rs/charts/breakers.gp'"
contains "$(cat "$T/so/report.html")" "Hatched bands are the times the breaker store was" \
    "store-outage's breakers caption says what the bands are"
contains "$(cat "$L/store-outage.log")" "store unreachable" \
    "store-outage's text summary has its 'store unreachable' row"

# ---- in the browser ----

need chromium "$L/apt.log" chromium
if ! command -v chromium >/dev/null 2>&1; then
    skip "report pages in headless chromium" "chromium is not installed and could not be (see $L/apt.log)"
    finish
    exit 0
fi

cat >"$T/measure.js" <<'EOF'
<script>
(function () {
  var out = [], d = document.documentElement, w = window.innerWidth;
  out.push('viewport ' + w + ' page ' + d.scrollWidth);
  var boxes = document.querySelectorAll('div.scroll, pre, img');
  for (var i = 0; i < boxes.length; i++) {
    var b = boxes[i], r = b.getBoundingClientRect();
    var what = (b.previousElementSibling ? b.previousElementSibling.textContent : '').slice(0, 50);
    if (r.right > w + 0.5) out.push('cut: ' + b.tagName + ' ' + i + ' reaches ' + r.right + 'px: ' + what);
    else if (b.tagName !== 'IMG' && b.scrollWidth > b.clientWidth)
      out.push('cut: ' + b.tagName + ' ' + i + ' scrolls ' + (b.scrollWidth - b.clientWidth) + 'px: ' + what);
  }
  var pre = document.createElement('pre');
  pre.id = 'fusebox-measure';
  pre.textContent = out.join('\n');
  document.body.appendChild(pre);
})();
</script>
EOF

# measure NAME HTML WIDTH: the page's measurements at WIDTH px, on stdout
measure() {
    python3 -c "import sys
s = open(sys.argv[1]).read()
open(sys.argv[2], 'w').write(s.replace('</body>', open(sys.argv[3]).read() + '</body>'))" \
        "$2" "$2.measure.html" "$T/measure.js"
    timeout 90 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome-$1-$3" \
        --window-size="$3,900" --virtual-time-budget=3000 --dump-dom "file://$2.measure.html" \
        2>"$L/chromium-$1-$3.log" |
        python3 -c "import re,sys
m = re.search(r'<pre id=\"fusebox-measure\">(.*?)</pre>', sys.stdin.read(), re.S)
print(m.group(1) if m else 'no measurement')"
    [ -n "${4:-}" ] && return # measured only: a screenshot is another browser start
    timeout 90 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome-$1-$3" \
        --hide-scrollbars --window-size="$3,4000" --screenshot="$L/$1-$3.png" "file://$2" \
        >/dev/null 2>&1
}

# fits NAME WIDTH: one test, on what measure wrote into $L/NAME-WIDTH.txt
fits() {
    M=$(cat "$L/$1-$2.txt")
    set -- "$1" "" "$2"
    case $M in
    "no measurement")
        skip "$1 fits $3 px" "chromium printed no page (see $L/chromium-$1-$3.log)"
        return
        ;;
    esac
    echo "$M" | python3 -c "import sys
lines = sys.stdin.read().splitlines()
v, page = int(lines[0].split()[1]), int(lines[0].split()[3])
sys.exit(0 if page <= v and len(lines) == 1 else 1)"
    r=$?
    [ $r -ne 0 ] && echo "$M" | sed 's/^/# /'
    ok $r "$1 fits $3 px: nothing cut off"
}

# The browser starts are independent: two pages at a time (each chromium is several
# processes, so more would only queue), then the tests in order.
pids=''
for w in 1000 1600; do
    measure report "$T/rs/report.html" $w >"$L/report-$w.txt" &
    pids="$pids $!"
    measure sweep "$T/sw/sweep.html" $w >"$L/sweep-$w.txt" &
    pids="$pids $!"
    wait $pids
    pids=''
    measure autoscale "$T/autoscale-storm/report.html" $w noshot >"$L/autoscale-$w.txt"
done
for w in 1000 1600; do
    fits report $w
    fits sweep $w
    fits autoscale $w
done

# ---- the charts' window labels: above the plot, none over another text ----
# openai-2024-12-11 has eight fault windows, four of them within 10 minutes of a 5-hour run. In
# each SVG chart, Chromium measures every text's box: a window label (drawn in #990000 or
# #444444) must end above the first panel's plot area (the top of the shaded windows) and
# overlap no other text (another label, a panel title, the chart's title).
"$FUSEBOX" run scenarios/openai-2024-12-11.json -q -o "$T/oa" >"$L/oa.log" 2>&1
ok $? "fusebox run openai-2024-12-11 (eight fault windows)"
cat >"$T/labels.js" <<'EOF'
<script>
(function () {
  var out = [], labels = [], others = [], top = Infinity;
  document.querySelectorAll('svg polygon').forEach(function (p) {
    var f = (p.getAttribute('fill') || '').replace(/ /g, '');
    if (f === 'rgb(204,0,0)' || f === 'rgb(119,119,119)') top = Math.min(top, p.getBoundingClientRect().top);
  });
  document.querySelectorAll('svg text').forEach(function (t) {
    var g = t.closest('g'), fill = g ? (g.getAttribute('fill') || '').replace(/ /g, '') : '';
    var r = t.getBoundingClientRect();
    if (r.width === 0) return;
    (fill === 'rgb(153,0,0)' || fill === 'rgb(68,68,68)' ? labels : others).push({t: t.textContent, r: r});
  });
  function hit(a, b) {
    return a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  }
  out.push('labels ' + labels.length);
  if (labels.length === 0) /* a chart without window labels: no two texts overlap */
    others.forEach(function (a, i) {
      others.slice(i + 1).forEach(function (b) {
        if (hit(a.r, b.r)) out.push('overprints: ' + a.t + ' / ' + b.t);
      });
    });
  labels.forEach(function (a, i) {
    if (a.r.bottom > top + 0.5) out.push('over the plot: ' + a.t + ' (bottom ' + a.r.bottom + ', plot top ' + top + ')');
    labels.slice(i + 1).concat(others).forEach(function (b) {
      if (hit(a.r, b.r)) out.push('overprints: ' + a.t + ' / ' + b.t);
    });
  });
  var pre = document.createElement('pre');
  pre.id = 'fusebox-measure';
  pre.textContent = out.join('\n');
  document.body.appendChild(pre);
})();
</script>
EOF
cat >"$T/svgpage.py" <<'EOF'
import re, sys
svg = re.sub(r'^.*?(<svg)', r'\1', open(sys.argv[1]).read(), flags=re.S)
page = '<!DOCTYPE html><html><body style="margin:0">' + svg + open(sys.argv[3]).read() + '</body></html>'
open(sys.argv[2], 'w').write(page)
EOF
# svg_texts ID SVG WANT NAME: Chromium measures SVG's texts (labels.js); one test, passed when
# the measurement is WANT exactly ("labels N": N window labels, nothing over the plot or another
# text), a skip when Chromium printed no page
svg_texts() {
    python3 "$T/svgpage.py" "$2" "$T/$1.html" "$T/labels.js"
    M=$(timeout 90 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome-$1" \
        --window-size=1200,1200 --virtual-time-budget=3000 --dump-dom "file://$T/$1.html" \
        2>"$L/chromium-$1.log" | python3 -c "import re,sys
m = re.search(r'<pre id=\"fusebox-measure\">(.*?)</pre>', sys.stdin.read(), re.S)
print(m.group(1) if m else 'no measurement')")
    echo "$M" >"$L/$1.txt"
    if [ "$M" = "no measurement" ]; then
        skip "$4" "chromium printed no page (see $L/chromium-$1.log)"
        return
    fi
    [ "$M" = "$3" ]
    r=$?
    [ $r -ne 0 ] && echo "$M" | sed 's/^/# /'
    ok $r "$4"
}
for chart in latency breakers outcomes; do
    svg_texts "labels-$chart" "$T/oa/charts/$chart.svg" "labels 8" \
        "the $chart chart: its 8 window labels drawn, above the plot, none over another text"
done
# the compare chart: five panels of three (openai-2024-12-11) and five (library-defaults)
# variants; no text over another (the variants' names in a legend, neighbouring values staggered)
"$FUSEBOX" run scenarios/library-defaults.json -q -o "$T/ld" >"$L/ld.log" 2>&1
ok $? "fusebox run library-defaults (five variants)"
for run in oa ld; do
    svg_texts "compare-$run" "$T/$run/charts/compare.svg" "labels 0" \
        "the compare chart of $run: no text over another"
done
finish
