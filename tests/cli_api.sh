#!/bin/sh
# cli_api.sh: libplansim as a user builds against it (docs/api.md): a C
# program of ten lines (tests/api/simulate.c), compiled with pkg-config's
# flags for plansim from the build tree (plansim-uninstalled.pc), gets the
# JSON the program prints for the default simulate, but for sim_wall_s,
# the one figure that differs between runs (the replay's own time).
#
# Run by the test harness with $top_srcdir, $top_builddir, $CC, $CFLAGS
# (a sanitizer build's: the program links the sanitizers' runtime as the
# library does) and $PLANSIM set.

# shellcheck source=tests/cli_lib.sh
. "${top_srcdir:?top_srcdir is not set}/tests/cli_lib.sh"

builddir=${top_builddir:?top_builddir is not set}
flags=$(PKG_CONFIG_PATH="$builddir" pkg-config --cflags --libs plansim 2>&1)
problem=
# shellcheck disable=SC2086
${CC:-cc} ${CFLAGS:-} -o "$tmp/simulate" "$top_srcdir/tests/api/simulate.c" $flags 2>"$tmp/cc.err" ||
    problem="cc with pkg-config's flags ($flags) failed: $(head -n 3 "$tmp/cc.err")"
check "a C program builds against libplansim with pkg-config's flags" "$problem"

problem=
LD_LIBRARY_PATH="$builddir/src/.libs" "$tmp/simulate" >"$tmp/lib.json" 2>"$tmp/lib.err" ||
    problem="exit status $?: $(cat "$tmp/lib.err")"
"$PLANSIM" simulate --format json >"$tmp/cli.json" 2>/dev/null
grep -v '"sim_wall_s"' "$tmp/lib.json" >"$tmp/lib.cut"
grep -v '"sim_wall_s"' "$tmp/cli.json" >"$tmp/cli.cut"
[ -s "$tmp/cli.cut" ] && cmp -s "$tmp/lib.cut" "$tmp/cli.cut" ||
    problem="$problem; the JSON differs: $(diff "$tmp/cli.cut" "$tmp/lib.cut" | head -n 5 | tr '\n' ' ')"
[ "$(grep -c '"sim_wall_s"' "$tmp/lib.json")" = 1 ] || problem="$problem; no sim_wall_s in the library's JSON"
check "the library's default simulate is the program's JSON but for sim_wall_s" "$problem"
finish
