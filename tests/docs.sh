#!/bin/sh
# tests/docs.sh: the docs name what the tables hold. Every row of the
# tables (strategies, schedules, plan fields, calibrated parameters,
# communication purposes, streams, collective algorithms), every hook of
# the strategy interface and every unit suite must be named where a
# reader looks for it; a row added without its documentation fails here.
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
    $(sed -n '/^typedef struct {/,/^} Strategy;/p' "$top_srcdir/src/strategy/strategy.h" |
        sed -n 's/^    \(const char \*\|gboolean\|int\|gsize\|unsigned\|void\|TaskId\) *(\{0,1\}\*\{0,1\}\([a-z_]*\).*/\2/p')
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

finish
