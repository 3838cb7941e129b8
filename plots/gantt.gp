# gantt.gp: one step's pipeline timeline, from `plansim simulate --trace`:
# every stream of each GPU, coloured by what it runs.
# gnuplot -e "input='trace.json'; output='gantt'" gantt.gp
# The trace has one event a line. Each slice becomes "row gpu start_us
# dur_us kind stream", kind 1 forward, 2 backward, 3 recompute, 4
# collective, 5 other; a stream is named by the trace's thread_name
# events (compute, comm, p2p, tp, ...). A stream with no slices, or whose
# slices are the same as a row's drawn above it (a tensor- or
# data-parallel partner's), gets no row: one row per distinct stream,
# labelled with its GPU and stream; the key lists the kinds that occur.
# A slice is drawn at least 2 ms wide, so that short collectives show.
data = sprintf("< awk '/\"thread_name\"/ { match($0, /\"tid\": [0-9]+/); t = substr($0, RSTART + 7, RLENGTH - 7);" \
               . " match($0, /\"args\": \\{\"name\": \"[a-z0-9_]+/); name[t] = substr($0, RSTART + 18, RLENGTH - 18) }" \
               . " /\"ph\": \"X\"/ {" \
               . " k = 5; if ($0 ~ /\"name\": \"fwd/) k = 1; else if ($0 ~ /\"name\": \"bwd/) k = 2;" \
               . " else if ($0 ~ /\"name\": \"recompute/) k = 3; else if ($0 ~ /collective/) k = 4;" \
               . " match($0, /\"pid\": [0-9]+/); g = substr($0, RSTART + 7, RLENGTH - 7) + 0;" \
               . " match($0, /\"tid\": [0-9]+/); s = substr($0, RSTART + 7, RLENGTH - 7) + 0;" \
               . " match($0, /\"ts\": [0-9.]+/); t = substr($0, RSTART + 6, RLENGTH - 6);" \
               . " match($0, /\"dur\": [0-9.]+/); d = substr($0, RSTART + 7, RLENGTH - 7);" \
               . " key = g * 64 + s; slices[key] = slices[key] t \" \" d \" \" k \"\\n\"; if (key > last) last = key }" \
               . " END { rows = 0; for (key = 0; key <= last; key++) { if (!(key in slices) || seen[slices[key]]++) continue;" \
               . " n = split(slices[key], x, \"\\n\"); for (i = 1; i < n; i++)" \
               . " print rows, int(key / 64), x[i], name[key %% 64]; rows++ } }' '%s'", input)
# the rows (row, GPU, stream) and the kinds that occur, for the ticks and the key
stats data using 1 nooutput
rows = STATS_max + 1
ticks = system(sprintf("%s | awk '!seen[$1]++ {printf \"%%s\\\"GPU %%s %%s\\\" %%s\", n++ ? \", \" : \"\", $2, $6, $1}'", data[3:]))
kinds = system(sprintf("%s | awk '{print $5}' | sort -u | tr '\\n' ' '", data[3:]))
eval sprintf("set ytics (%s)", ticks)
set title "One step, every stream of each GPU (of streams that run alike, the first)"
set xlabel "time (ms)"
set xrange [0:*]
set ylabel "GPU, stream"
set yrange [-0.6:rows - 0.4] reverse
set key outside right top
set style fill solid 1.0 noborder
color(k) = k == 1 ? 0x1f77b4 : k == 2 ? 0xff7f0e : k == 3 ? 0x2ca02c : k == 4 ? 0xd62728 : 0x7f7f7f
do for [term in "pngcairo svg"] {
    if (term eq "svg") { set terminal svg size 960,640; set output output.".svg" } \
    else { set terminal pngcairo size 960,640; set output output.".png" }
    plot data using (($3 + $4 / 2) / 1e3):1:($4 / 2e3 > 1 ? $4 / 2e3 : 1):(0.35):(color($5)) \
              with boxxyerror linecolor rgb variable notitle, \
         for [k in kinds] NaN with boxes linecolor rgb sprintf("#%06x", color(k + 0)) \
              title word("forward backward recompute collective other", k + 0)
}
