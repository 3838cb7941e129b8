# gantt.gp: one step's pipeline timeline, from `plansim simulate --trace`:
# each GPU's compute stream, coloured by what it runs.
# gnuplot -e "input='trace.json'; output='gantt'" gantt.gp
# The trace has one event a line; the compute stream is thread 0. Each
# slice becomes "row gpu start_us dur_us kind", kind 1 forward, 2 backward,
# 3 recompute, 4 collective, 5 other. A GPU whose compute stream is the
# same as one drawn above it (a tensor- or data-parallel partner) gets no
# row of its own: one row per distinct stream, labelled with its GPU; the
# key lists the kinds that occur.
data = sprintf("< grep '\"ph\": \"X\"' '%s' | grep '\"tid\": 0,' | awk '{" \
               . "k = 5; if ($0 ~ /\"name\": \"fwd/) k = 1; else if ($0 ~ /\"name\": \"bwd/) k = 2;" \
               . " else if ($0 ~ /\"name\": \"recompute/) k = 3; else if ($0 ~ /collective/) k = 4;" \
               . " match($0, /\"pid\": [0-9]+/); g = substr($0, RSTART + 7, RLENGTH - 7) + 0;" \
               . " match($0, /\"ts\": [0-9.]+/); t = substr($0, RSTART + 6, RLENGTH - 6);" \
               . " match($0, /\"dur\": [0-9.]+/); d = substr($0, RSTART + 7, RLENGTH - 7);" \
               . " slices[g] = slices[g] t \" \" d \" \" k \"\\n\"; if (g > last) last = g }" \
               . " END { rows = 0; for (g = 0; g <= last; g++) { if (!(g in slices) || seen[slices[g]]++) continue;" \
               . " n = split(slices[g], s, \"\\n\"); for (i = 1; i < n; i++) print rows, g, s[i]; rows++ } }'", input)
# the rows (row, GPU) and the kinds that occur, for the ticks and the key
stats data using 1 nooutput
rows = STATS_max + 1
ticks = system(sprintf("%s | awk '!seen[$1]++ {printf \"%%s\\\"GPU %%s\\\" %%s\", n++ ? \", \" : \"\", $2, $1}'", data[3:]))
kinds = system(sprintf("%s | awk '{print $5}' | sort -u | tr '\\n' ' '", data[3:]))
eval sprintf("set ytics (%s)", ticks)
set title "One step, compute stream of each GPU (of GPUs that run alike, the first)"
set xlabel "time (ms)"
set ylabel "GPU"
set yrange [-0.6:rows - 0.4] reverse
set key outside right top
set style fill solid 1.0 noborder
color(k) = k == 1 ? 0x1f77b4 : k == 2 ? 0xff7f0e : k == 3 ? 0x2ca02c : k == 4 ? 0xd62728 : 0x7f7f7f
do for [term in "pngcairo svg"] {
    if (term eq "svg") { set terminal svg size 960,420; set output output.".svg" } \
    else { set terminal pngcairo size 960,420; set output output.".png" }
    plot data using (($3 + $4 / 2) / 1e3):1:($4 / 2e3):(0.35):(color($5)) \
              with boxxyerror linecolor rgb variable notitle, \
         for [k in kinds] NaN with boxes linecolor rgb sprintf("#%06x", color(k + 0)) \
              title word("forward backward recompute collective other", k + 0)
}
