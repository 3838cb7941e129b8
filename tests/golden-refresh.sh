#!/bin/sh
# golden-refresh.sh: rewrites the expected outputs in tests/golden/ from
# the plansim at hand, for the cases of tests/golden/cases.txt, after a
# deliberate change of output (or a new case). tests/golden.sh is the test
# that compares; both run and mask the cases with tests/golden/lib.sh.
#
# Usage, from a build folder where `make` has built src/plansim:
#
#   PLANSIM=$PWD/src/plansim top_srcdir=/path/to/plansim \
#       sh /path/to/plansim/tests/golden-refresh.sh [NAME.EXT...]
#
# With NAME.EXT arguments (tiny-tp2-pp2.json) only those cases are
# rewritten; without, every case. It writes NAME.EXT and, when the case
# prints on stderr, NAME.EXT.stderr (removing a NAME.EXT.stderr that is no
# longer printed) in $top_srcdir/tests/golden/, names the expected files
# that no case makes (remove them by hand), and changes nothing for a case
# whose plansim exits nonzero. Review the result with `git diff tests/golden`
# and add a new case's files to git.

# shellcheck source=tests/cli_lib.sh
. "${top_srcdir:?top_srcdir is not set}/tests/cli_lib.sh"
# shellcheck source=tests/golden/lib.sh
. "$top_srcdir/tests/golden/lib.sh"

[ -w "$golden_dir" ] || {
    not_ok setup "cannot write to $golden_dir"
    finish
}
only=" $* "
printf '%s\n' "$@" >"$tmp/wanted"
: >"$tmp/made"
while read -r name ext args; do
    printf '%s\n%s\n' "$name.$ext" "$name.$ext.stderr" >>"$tmp/made"
    case $only in
    "  " | *" $name.$ext "*) ;;
    *) continue ;;
    esac
    set -f
    # shellcheck disable=SC2086 # the arguments split on blanks
    set -- $args
    set +f
    problem=$(golden_run "$name" "$ext" "$@")
    if [ -z "$problem" ]; then
        cp "$tmp/$name.$ext" "$golden_dir/$name.$ext" || problem="cannot write $name.$ext"
        if [ -s "$tmp/$name.$ext.stderr" ]; then
            cp "$tmp/$name.$ext.stderr" "$golden_dir/$name.$ext.stderr" ||
                problem="$problem; cannot write $name.$ext.stderr"
        else
            rm -f "$golden_dir/$name.$ext.stderr"
        fi
    fi
    check "wrote $name.$ext" "$problem"
done <<CASES
$(golden_cases)
CASES

while read -r want; do
    [ -z "$want" ] || grep -q -x -F -e "$want" "$tmp/made" ||
        not_ok "$want" "no such case in $golden_dir/cases.txt"
done <"$tmp/wanted"
golden_expected >"$tmp/expected"
LC_ALL=C sort -u "$tmp/made" | LC_ALL=C comm -23 "$tmp/expected" - >"$tmp/stale"
if [ -s "$tmp/stale" ]; then
    printf 'no case makes these files in %s (remove them?):\n' "$golden_dir"
    sed 's/^/  /' "$tmp/stale"
fi
finish
