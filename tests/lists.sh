#!/bin/sh
# lists.sh: lists.am, the lists of files Makefile.am includes, is what
# ./bootstrap makes of the folders now. A file added or removed without
# `./bootstrap --lists` (a source the build would miss, a GPU or cluster
# file `make install` would leave out) fails here, with the difference.
#
# Run by the test harness with $top_srcdir and $PLANSIM set.

# shellcheck source=tests/cli_lib.sh
. "${top_srcdir:?top_srcdir is not set}/tests/cli_lib.sh"

problem=
sh "$top_srcdir/bootstrap" --print-lists >"$tmp/lists.am" ||
    problem="bootstrap --print-lists failed"
if ! cmp -s "$tmp/lists.am" "$top_srcdir/lists.am"; then
    problem="$problem; $top_srcdir/lists.am is not the folders' (run ./bootstrap --lists):"
    problem="$problem $(diff "$top_srcdir/lists.am" "$tmp/lists.am" | grep '^[<>]' | head -n 5 |
        tr '\n' ' ')"
fi
check "lists.am lists the files the folders hold" "$problem"
finish
