# shellcheck shell=sh disable=SC2034
# cli_lib.sh: what the command-line tests share (sourced, not run): a
# TAP-like tally ("ok - ..." / "not ok - ...", then "N passed, M failed"),
# the checks of $top_srcdir and $PLANSIM, a temporary folder $tmp removed
# on exit, the tiny model and A100 cluster paths, the names of shipped
# folders and a shipped cluster with its GPU file in it.

pass=0
fail=0

ok() {
    pass=$((pass + 1))
    printf 'ok - %s\n' "$1"
}

not_ok() {
    fail=$((fail + 1))
    printf 'not ok - %s: %s\n' "$1" "$2"
}

# check NAME PROBLEM: "ok" when PROBLEM is empty
check() {
    if [ -z "$2" ]; then
        ok "$1"
    else
        not_ok "$1" "${2#; }"
    fi
}

finish() {
    printf '%d passed, %d failed\n' "$pass" "$fail"
    if [ "$fail" -eq 0 ]; then
        exit 0
    fi
    exit 1
}

if [ -z "${top_srcdir:-}" ] || [ ! -d "$top_srcdir" ]; then
    not_ok setup "top_srcdir is not set to a folder (got \"${top_srcdir:-}\")"
    finish
fi
if [ -z "${PLANSIM:-}" ] || [ ! -x "$PLANSIM" ]; then
    not_ok setup "PLANSIM is not set to an executable (got \"${PLANSIM:-}\")"
    finish
fi
top_srcdir=$(cd "$top_srcdir" && pwd) || {
    not_ok setup "cannot enter top_srcdir"
    finish
}

tmp=$(mktemp -d) || {
    not_ok setup "mktemp -d failed"
    finish
}
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

tiny=$top_srcdir/models/tiny-gpt.json
a100=$top_srcdir/topologies/dgx-a100-80gb.json

# one_line FILE: the file's content on one line, for a "not ok" detail
one_line() {
    tr '\n' '|' <"$1" | cut -c 1-400 | sed 's/|$//'
}

# csv_column FILE NAME: the column NAME of a CSV, without its header
# (plots/csvcols.awk reads quoted cells whole)
csv_column() {
    awk -v cols="$2" -f "$top_srcdir/plots/csvcols.awk" "$1"
}

# shipped_names FOLDER...: the names of the .json files of the shipped
# FOLDERs (under $top_srcdir), sorted and each once, comma-separated, as
# plansim lists them when it refuses an unknown name
shipped_names() {
    for folder in "$@"; do
        for f in "$top_srcdir/$folder"/*.json; do
            [ -f "$f" ] && basename "$f" .json
        done
    done | LC_ALL=C sort -u | paste -s -d , - | sed "s/,/, /g"
}

# inline_gpu CLUSTER: a shipped cluster file with the object of the GPU file
# it names ("gpu": "a100-sxm4-80gb", topologies/gpus/) in place of the name,
# so that one sed edits any of its keys; the cluster must have no base
inline_gpu() {
    gpu=$(sed -n 's/^  "gpu": "\([a-z0-9.-]*\)",$/\1/p' "$1")
    awk -v gpu="$top_srcdir/topologies/gpus/$gpu.json" '
        /^  "gpu": "[a-z0-9.-]*",$/ {
            printf "  \"gpu\": "
            for (n = 0; (getline line <gpu) > 0; n++)
                printf "%s%s", n ? "\n  " : "", line
            print ","
            next
        }
        { print }' "$1"
}
