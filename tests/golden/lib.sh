# shellcheck shell=sh disable=SC2154 # top_srcdir, tmp: set by tests/cli_lib.sh
# tests/golden/lib.sh: what tests/golden.sh and tests/golden-refresh.sh
# share (sourced after tests/cli_lib.sh, which sets $top_srcdir, $PLANSIM
# and $tmp): the cases table, running one case, and the mask that hides
# what changes from run to run or machine to machine.
#
# The cases are the lines of tests/golden/cases.txt: NAME EXT ARGUMENT...
# (see that file's header). A case's expected output is
# tests/golden/NAME.EXT, and tests/golden/NAME.EXT.stderr when its stderr
# is not empty. Inputs that only the cases use live in tests/golden/inputs/.

golden_dir=$top_srcdir/tests/golden

# golden_cases: the table's cases, one "NAME EXT ARGUMENT..." a line,
# without comments and blank lines
golden_cases() {
    sed -e 's/#.*//' -e 's/[[:blank:]]*$//' -e '/^[[:blank:]]*$/d' "$golden_dir/cases.txt"
}

# golden_expected: the expected files there are (NAME.EXT and
# NAME.EXT.stderr, one a line, sorted), whether a case makes them or not
golden_expected() {
    (cd "$golden_dir" && ls) | grep -v -x -e cases.txt -e lib.sh -e inputs | LC_ALL=C sort
}

# golden_mask EXT: filters stdin to stdout, replacing every figure that
# depends on the machine or the moment by "*":
#   text: the wall time of "simulated ... events in T s", any "R events/s"
#         or "R plans/s", and a sweep's "M:SS left";
#   JSON: the value of every key containing "wall" ("sim_wall_s"), or
#         ending in "events_per_s", as the string "*";
#   CSV (EXT csv): every column whose header contains "wall" or ends in
#         "events_per_s" (the header is the first line).
# Everything else is kept byte for byte.
golden_mask() {
    if [ "$1" = csv ]; then
        awk '
            # split a CSV line into f[1..n], keeping the quotes of quoted fields
            function split_csv(line, f,    n, i, ch, q, field) {
                n = 0; q = 0; field = ""
                for (i = 1; i <= length(line); i++) {
                    ch = substr(line, i, 1)
                    if (ch == "\"") q = !q
                    if (ch == "," && !q) { f[++n] = field; field = ""; continue }
                    field = field ch
                }
                f[++n] = field
                return n
            }
            NR == 1 {
                n = split_csv($0, h)
                for (i = 1; i <= n; i++)
                    if (h[i] ~ /wall/ || h[i] ~ /events_per_s$/) masked[i] = 1
                print
                next
            }
            {
                n = split_csv($0, f)
                out = ""
                for (i = 1; i <= n; i++)
                    out = out (i > 1 ? "," : "") (i in masked ? "*" : f[i])
                print out
            }'
    else
        cat
    fi | sed \
        -e 's/\( events in \)[0-9][-+.0-9eE]* s$/\1* s/' \
        -e 's/[0-9][-+.0-9eE]* \(events\/s\)/* \1/g' \
        -e 's/[0-9][-+.0-9eE]* \(plans\/s\)/* \1/g' \
        -e 's/[0-9]*:[0-9][0-9] left/*:** left/g' \
        -e 's/\("[A-Za-z_]*wall[A-Za-z_]*": *\)[-+.0-9eE]*/\1"*"/g' \
        -e 's/\("[A-Za-z_]*events_per_s": *\)[-+.0-9eE]*/\1"*"/g'
}

# golden_run NAME EXT ARGUMENT...: runs "plansim ARGUMENT..." in $top_srcdir
# with LC_ALL=C and writes its masked output to $tmp/NAME.EXT and its
# masked stderr to $tmp/NAME.EXT.stderr. "{out}" in an argument stands for the
# file $tmp/NAME.file: then that file is the output and stdout must be
# empty. Prints what went wrong (a nonzero exit status, output on stdout
# beside {out}), nothing when all is well.
golden_run() {
    name=$1
    ext=$2
    shift 2
    out_file=
    for arg in "$@"; do
        shift
        case $arg in
        *'{out}'*)
            out_file=$tmp/$name.file
            rm -f "$out_file"
            arg=$(printf '%s\n' "$arg" | sed "s|{out}|$out_file|g")
            ;;
        esac
        set -- "$@" "$arg"
    done
    (cd "$top_srcdir" && LC_ALL=C && export LC_ALL && exec "$PLANSIM" "$@") </dev/null \
        >"$tmp/$name.stdout" 2>"$tmp/$name.raw-stderr"
    status=$?
    if [ -n "$out_file" ]; then
        if [ -s "$tmp/$name.stdout" ]; then
            printf '; stdout is not empty beside {out}: %s' "$(one_line "$tmp/$name.stdout")"
        fi
        if [ ! -e "$out_file" ]; then
            printf '; {out} was not written'
            : >"$out_file"
        fi
        golden_mask "$ext" <"$out_file" >"$tmp/$name.$ext"
    else
        golden_mask "$ext" <"$tmp/$name.stdout" >"$tmp/$name.$ext"
    fi
    golden_mask txt <"$tmp/$name.raw-stderr" >"$tmp/$name.$ext.stderr"
    if [ "$status" -ne 0 ]; then
        printf '; exit status %s, expected 0; stderr: %s' "$status" "$(one_line "$tmp/$name.$ext.stderr")"
    fi
}
