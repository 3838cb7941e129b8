#!/bin/sh
# tests/docs.sh: the docs name what the tables hold. Every row of the
# tables (strategies, schedules, plan fields, calibrated parameters,
# communication purposes, streams, collective algorithms), every hook of
# the strategy interface and every unit suite must be named where a
# reader looks for it; a row added without its documentation fails here.
# And the other way: every file the docs name exists, and every flag of
# their example command lines is the command's.
. "${top_srcdir:?}/tests/cli_lib.sh"

d="$top_srcdir/docs"

# names(FILE, SED-EXPRESSION): the names the expression prints from FILE's rows
names() {
    sed -n "$2" "$top_srcdir/$1"
}

# named(WHAT, DOC, NAME...): each NAME appears in DOC as `NAME`, or as a
# call `NAME(...)`
named() {
    what=$1 doc=$2
    shift 2
    missing=
    for n in "$@"; do
        grep -Fq -e "\`$n\`" -e "\`$n(" "$d/$doc" || missing="$missing $n"
    done
    check "every $what is named in docs/$doc" "${missing:+missing:$missing}"
}

# shellcheck disable=SC2046
named "strategy of strategies.def" architecture.md \
    $(names src/strategy/strategies.def 's/^STRATEGY(\([a-z_0-9]*\)).*/\1.c/p')
# shellcheck disable=SC2046
named "hook and member of Strategy" architecture.md \
    $(awk '/^typedef struct {/ { body = "" } { body = body $0 "\n" }
           /^} Strategy;/ { printf "%s", body; exit }' "$top_srcdir/src/strategy/strategy.h" |
        grep -v '^ *\(/\*\|\*\)' |
        sed -n 's/^    \(const \)\{0,1\}[A-Za-z_0-9]* \**(\*\([a-z_]*\)).*/\2/p
                s/^    \(const \)\{0,1\}[A-Za-z_0-9]* \**\([a-z_]*\)\(, \([a-z_]*\)\)\{0,1\};.*/\2 \4/p')
# shellcheck disable=SC2046
named "schedule of schedules.def" cli.md \
    $(names src/base/schedules.def 's/^SCHEDULE([A-Z0-9]*, "\([a-z0-9-]*\)".*/\1/p')
# shellcheck disable=SC2046
named "plan field of plan_fields.def" inputs.md \
    $(names src/spec/plan_fields.def 's/^PLAN_FIELD([A-Z_0-9]*, \([a-z_0-9]*\),.*/\1/p')
# shellcheck disable=SC2046
named "parameter of cluster_params.def" inputs.md \
    $(names src/spec/cluster_params.def 's/^CLUSTER_PARAM([A-Z_0-9]*, \([a-z_]*\), \([a-z_0-9]*\),.*/\1.\2/p')
# shellcheck disable=SC2046
named "communication purpose of tags.def" report.md \
    $(names src/strategy/tags.def 's/^TAG([A-Z]*, "\([a-z]*\)".*/\1/p')
# shellcheck disable=SC2046
named "stream of streams.def" report.md \
    $(names src/strategy/streams.def 's/^STREAM([A-Z0-9]*, "\([a-z0-9]*\)".*/\1/p')
# shellcheck disable=SC2046
named "collective algorithm of algorithms.def" report.md \
    $(names src/base/algorithms.def 's/^ALGORITHM([A-Z]*, \([a-z]*\),.*/\1/p')
# shellcheck disable=SC2046
named "unit suite of suites.def" testing.md \
    $(names tests/suites.def 's/^SUITE(\([a-z_0-9]*\)).*/\1/p')

# every source, script or build file a doc names in backticks exists
# (a path from the top folder or from src/, or a file's name anywhere in
# the tree);
# placeholders in capitals (schedule_NAME.c) are patterns, not files
missing=
for doc in "$d"/*.md "$top_srcdir/README.md"; do
    for n in $(grep -oE '`[A-Za-z0-9_./-]+\.(c|h|def|sh|am|ac|awk|gp)`' "$doc" | tr -d '`' |
        grep -v '[A-Z][A-Z]' | sort -u); do
        case $n in
        */*) [ -e "$top_srcdir/$n" ] || [ -e "$top_srcdir/src/$n" ] ;;
        *) [ -n "$(find "$top_srcdir" -name "$n" ! -path '*/.git/*' | head -n 1)" ] ;;
        esac || missing="$missing ${doc##*/}:$n"
    done
done
check "every file the docs name exists" "${missing:+missing:$missing}"

# every flag of an example command line in the docs (plansim COMMAND
# ..., continued lines joined) is one of that command's (--help-all)
unknown=
for c in simulate sweep run collective calibrate; do
    "$PLANSIM" "$c" --help-all >"$tmp/help.$c" 2>&1
done
for doc in "$d"/*.md "$top_srcdir/README.md"; do
    sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$doc" |
        grep -oE 'plansim (simulate|sweep|run|collective|calibrate)( [^`]*)?' >"$tmp/lines" || continue
    while read -r _ c rest; do
        for f in $(printf ' %s\n' "$rest" | grep -oE ' --[a-z0-9-]+' | sed 's/=.*//'); do
            grep -Eq -e "(^|[ ,])$f([ =,]|\$)" -e "(^|[ ,])--\[no-\]${f#--}([ =,]|\$)" \
                "$tmp/help.$c" || grep -Eq -e "--${f#--no-}([ =,]|\$)" "$tmp/help.$c" ||
                unknown="$unknown ${doc##*/}:$c:$f"
        done
    done <"$tmp/lines"
done
check "every flag of the docs' example command lines is the command's" \
    "${unknown:+unknown:$unknown}"

finish
