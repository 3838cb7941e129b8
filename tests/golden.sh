#!/bin/sh
# golden.sh: the command line's outputs, byte for byte: every case of
# tests/golden/cases.txt (simulate in text, JSON and CSV over several plans,
# models and clusters, a trace, a small sweep, collective tables, the help
# texts) prints, once masked (golden_mask in tests/golden/lib.sh hides the
# wall-clock figures), exactly its expected file tests/golden/NAME.EXT, and
# on stderr exactly NAME.EXT.stderr or nothing. A mismatch prints a unified
# diff, expected first. After a deliberate change of output, rewrite the
# expected files with tests/golden-refresh.sh and review the diff.
#
# Run by the test harness from the build folder with $top_srcdir and
# $PLANSIM set; writes only inside a temporary folder.

# shellcheck source=tests/cli_lib.sh
. "${top_srcdir:?top_srcdir is not set}/tests/cli_lib.sh"
# shellcheck source=tests/golden/lib.sh
. "$top_srcdir/tests/golden/lib.sh"

# same EXPECTED ACTUAL: prints a problem and the diff when they differ; a
# missing EXPECTED is an empty one when EMPTY_OK is set
same() {
    if [ ! -e "$1" ]; then
        if [ -n "${empty_ok:-}" ]; then
            [ -s "$2" ] || return 0
            printf '; unexpected output in %s:\n' "${2##*/}"
            diff -u /dev/null "$2"
        else
            printf '; no expected file %s (tests/golden-refresh.sh writes it)' "${1#"$top_srcdir"/}"
        fi
    elif ! cmp -s "$1" "$2"; then
        printf '; differs from %s:\n' "${1#"$top_srcdir"/}"
        diff -u "$1" "$2"
    fi
}

: >"$tmp/made"
cases=0
while read -r name ext args; do
    cases=$((cases + 1))
    set -f
    # shellcheck disable=SC2086 # the arguments split on blanks
    set -- $args
    set +f
    problem=$(
        golden_run "$name" "$ext" "$@"
        same "$golden_dir/$name.$ext" "$tmp/$name.$ext"
        empty_ok=1 same "$golden_dir/$name.$ext.stderr" "$tmp/$name.$ext.stderr"
    )
    check "$name.$ext: plansim $args" "$problem"
    printf '%s\n%s\n' "$name.$ext" "$name.$ext.stderr" >>"$tmp/made"
done <<CASES
$(golden_cases)
CASES

# every expected file belongs to a case
golden_expected >"$tmp/expected"
stale=$(LC_ALL=C sort -u "$tmp/made" | LC_ALL=C comm -23 "$tmp/expected" - | tr '\n' ' ' | sed 's/ $//')
problem=
[ "$cases" -ge 1 ] || problem="no cases in tests/golden/cases.txt"
[ -z "$stale" ] || problem="$problem; no case makes $stale"
check "every file in tests/golden/ belongs to one of the $cases cases" "$problem"

finish
