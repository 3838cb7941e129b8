#!/bin/sh
# cli_html.sh: --html on simulate, sweep and run. Without a browser: each
# page is one file that names no other (no address, no src or href, a
# Content-Security-Policy of default-src 'none'), shows the step time the
# JSON report gives, escapes a model's name, and is written whole or not at
# all. In a real browser, headless Chromium (Debian's chromium; $CHROMIUM
# names another): every chart and table is drawn (the page's script marks
# each with data-drawn, the marks it drew) and the page asks the network
# for nothing (Chromium's net log holds no request of the page's, while a
# page that does fetch shows one there). Without Chromium the browser's
# half is skipped (CHROMIUM= too): exit 77 when the rest passes, a failure
# where PLANSIM_REQUIRE_CHROMIUM is set (CI, which installs it).
#
# Run by the test harness with $top_srcdir and $PLANSIM set.

# shellcheck source=tests/cli_lib.sh
. "${top_srcdir:?top_srcdir is not set}/tests/cli_lib.sh"

small="--model $tiny --cluster $a100 --nodes 1 --tp 2 --pp 2 --global-batch-size 16"

# page NAME ARG...: plansim ARG... --html $tmp/NAME.html, its report in
# $tmp/NAME.out; prints a problem when it fails or writes no page
page() {
    name=$1
    shift
    "$PLANSIM" "$@" --html "$tmp/$name.html" >"$tmp/$name.out" 2>"$tmp/$name.err" &&
        [ -s "$tmp/$name.html" ] || printf '; %s failed: %s' "$name" "$(one_line "$tmp/$name.err")"
}

# shellcheck disable=SC2086
problem=$(page simulate simulate $small)$(page sweep sweep $small --top 5)$(page run run $small --tokens 5e10)
check "simulate, sweep and run write their pages" "$problem"

# ---- self-contained ----------------------------------------------------
problem=
for name in simulate sweep run; do
    f=$tmp/$name.html
    [ -s "$f" ] || continue
    grep -q '://' "$f" && problem="$problem; $name names an address: $(grep -o '.\{20\}://.\{20\}' "$f" | head -n 1)"
    grep -Eiq '(src|href)=|url\(|@import' "$f" && problem="$problem; $name loads something: $(grep -Eio '.{20}((src|href)=|url\(|@import).{20}' "$f" | head -n 1)"
    grep -q "content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'\"" "$f" ||
        problem="$problem; $name lacks its Content-Security-Policy"
done
check "each page names no other file and forbids fetching" "$problem"

# ---- the step time, as the JSON report gives it (%.4g s) ---------------
# shellcheck disable=SC2086
step=$("$PLANSIM" simulate $small --format json | sed -n 's/^  "step_time_s": \(.*\),$/\1/p')
shown=$(printf '%.4g s' "$step")
problem=
[ -n "$step" ] || problem="; no step_time_s in the JSON report"
grep -q "<span class=\"value\">$shown</span>" "$tmp/simulate.html" || problem="$problem; simulate's page lacks '$shown'"
check "the page heads with the step time ($shown)" "$problem"

# ---- clusters compared: a column names each row's ----------------------
# shellcheck disable=SC2086
problem=$(page clusters sweep --model "$tiny" --cluster dgx-a100-80gb,dgx-h100 --nodes 1 \
    --global-batch-size 16 --top 3)
grep -q '"cluster"' "$tmp/clusters.html" || grep -q '>cluster<' "$tmp/clusters.html" ||
    problem="$problem; no cluster column"
[ "$(grep -o 'dgx-\(a100-80gb\|h100\):1' "$tmp/clusters.html" | wc -l)" -ge 3 ] ||
    problem="$problem; the rows do not name their cluster"
check "a sweep comparing clusters names each row's on its page" "$problem"

# ---- text escaped ------------------------------------------------------
sed 's/"name": "tiny-gpt"/"name": "<b>\&\\"x'"'"'<\/script>"/' "$tiny" >"$tmp/odd.json"
# shellcheck disable=SC2086
problem=$(page odd simulate --model "$tmp/odd.json" --cluster "$a100" --nodes 1)
grep -q '<title>plansim simulate: &lt;b&gt;&amp;&quot;x&#39;&lt;/script&gt; on' "$tmp/odd.html" ||
    problem="$problem; the title is not escaped: $(grep '<title>' "$tmp/odd.html")"
[ "$(grep -c '</script>' "$tmp/odd.html")" -eq 2 ] || problem="$problem; a name ends a script early"
check "a model's name reaches the page escaped" "$problem"

# ---- whole or not at all -----------------------------------------------
problem=
# shellcheck disable=SC2086
"$PLANSIM" simulate $small --html "$tmp/missing/page.html" -o "$tmp/report.txt" 2>"$tmp/missing.err"
status=$?
[ "$status" -eq 2 ] || problem="; a page in a missing folder: exit status $status, expected 2"
[ -e "$tmp/report.txt" ] && problem="$problem; the report was written without its page"
# shellcheck disable=SC2086
"$PLANSIM" run $small --tokens 5e10 --html "$tmp/same" -o "$tmp/same" 2>"$tmp/same.err"
status=$?
[ "$status" -eq 2 ] || problem="$problem; --html and -o one file: exit status $status, expected 2"
grep -q -e "--html: expected a file other than -o's" "$tmp/same.err" ||
    problem="$problem; its error: $(one_line "$tmp/same.err")"
[ -e "$tmp/same" ] && problem="$problem; it wrote the file"
check "a page that cannot be written leaves nothing behind" "$problem"

# ---- in a browser --------------------------------------------------------
browser=${CHROMIUM-$(command -v chromium || command -v chromium-browser)}
if [ -z "$browser" ] || ! command -v "$browser" >/dev/null; then
    if [ -n "${PLANSIM_REQUIRE_CHROMIUM:-}" ]; then
        not_ok "chromium" "none found, and PLANSIM_REQUIRE_CHROMIUM is set"
        finish
    fi
    printf '# no chromium: the pages are not opened in a browser\n'
    [ "$fail" -eq 0 ] && { printf '%d passed, 0 failed, the browser skipped\n' "$pass"; exit 77; }
    finish
fi

# open NAME FILE: loads FILE in headless Chromium, its DOM once the
# scripts have run into $tmp/NAME.dom and its net log into $tmp/NAME.net
# (--no-sandbox: CI runs as root)
open_page() {
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
        --no-first-run \
        --user-data-dir="$tmp/profile-$1" --log-net-log="$tmp/$1.net" \
        --dump-dom "file://$2" >"$tmp/$1.dom" 2>"$tmp/$1.browser-err"
}

# a request of the page's own: one whose initiator is the page's origin,
# opaque ("null") for a file; Chromium's own (updates, ...) have none
requests() {
    grep -o '"initiator":"null"' "$1" | wc -l
}

for name in simulate sweep run; do
    problem=
    open_page "$name" "$tmp/$name.html" || problem="; chromium failed: $(one_line "$tmp/$name.browser-err")"
    charts=$(grep -o 'data-draw="' "$tmp/$name.dom" | wc -l)
    drawn=$(grep -o 'data-drawn="[1-9][0-9]*"' "$tmp/$name.dom" | wc -l)
    [ "$charts" -gt 0 ] && [ "$drawn" -eq "$charts" ] ||
        problem="$problem; $drawn of $charts charts and tables drawn"
    [ "$(grep -o '<rect ' "$tmp/$name.dom" | wc -l)" -gt 0 ] || problem="$problem; no SVG bar drawn"
    [ -s "$tmp/$name.net" ] || problem="$problem; no net log"
    [ "$(requests "$tmp/$name.net")" -eq 0 ] || problem="$problem; the page made a request"
    check "$name's page draws its $charts charts and tables in Chromium, with no request" "$problem"
done

problem=
grep -q "$shown" "$tmp/simulate.dom" || problem="; the DOM lacks the step time '$shown'"
# simulate: the breakdown, the memory per stage and the timeline, with
# the critical rank's lanes and its neighbour's (pp 2)
[ "$(grep -o 'data-draw="' "$tmp/simulate.dom" | wc -l)" -eq 3 ] || problem="$problem; not 3 charts"
grep -q '>GPU 0 (stage 0) compute<' "$tmp/simulate.dom" || problem="$problem; no lane of the critical rank"
grep -q '>GPU 4 (stage 1) compute<' "$tmp/simulate.dom" || problem="$problem; no lane of its neighbour"
check "simulate's page in Chromium: the step time, 3 charts, the timeline's lanes" "$problem"

# the net log sees a page's request: the same check fails on a page that
# fetches (an unreachable address: nothing leaves the machine)
printf '<!DOCTYPE html><img alt="" src="http://127.0.0.1:9/x.png">\n' >"$tmp/fetch.html"
open_page fetch "$tmp/fetch.html"
problem=
[ "$(requests "$tmp/fetch.net")" -gt 0 ] || problem="no request seen"
check "the net log shows a request of a page that makes one" "$problem"

finish
