#!/bin/sh
# figures.sh: the committed figures are the code's. plots/figures.sh makes
# the figures' inputs afresh and their numbers (what each plot draws) into
# figures.txt; it must equal plots/figures/figures.txt, which `make
# plots-update` writes beside the PNGs it copies. A change of the model
# that moves a figure fails here until the figures are made again.

# shellcheck source=tests/cli_lib.sh
. "${top_srcdir:?top_srcdir is not set}/tests/cli_lib.sh"

problem=
if ! PLANSIM=$PLANSIM sh "$top_srcdir/plots/figures.sh" "$tmp/figures" >"$tmp/log" 2>&1; then
    problem="plots/figures.sh failed: $(one_line "$tmp/log")"
elif ! diff "$top_srcdir/plots/figures/figures.txt" "$tmp/figures/figures.txt" >"$tmp/diff"; then
    problem="the committed figures are stale (make plots-update): $(head -n 6 "$tmp/diff" | tr '\n' '|')"
fi
check "plots/figures/figures.txt holds the numbers of the figures as the code makes them" "$problem"
finish
