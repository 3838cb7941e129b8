# gantt.gp: one step's pipeline timeline, from `plansim simulate --trace`:
# each GPU's compute stream, coloured by what it runs.
# gnuplot -e "input='trace.json'; output='gantt'" gantt.gp
# The trace has one event a line; the compute stream is thread 0. Each
# slice becomes "gpu start_us dur_us kind", kind 1 forward, 2 backward,
# 3 recompute, 4 collective, 5 other.
data = sprintf("< grep '\"ph\": \"X\"' '%s' | grep '\"tid\": 0,' | awk '{" \
               . "k = 5; if ($0 ~ /\"name\": \"fwd/) k = 1; else if ($0 ~ /\"name\": \"bwd/) k = 2;" \
               . " else if ($0 ~ /\"name\": \"recompute/) k = 3; else if ($0 ~ /collective/) k = 4;" \
               . " match($0, /\"pid\": [0-9]+/); g = substr($0, RSTART + 7, RLENGTH - 7);" \
               . " match($0, /\"ts\": [0-9.]+/); t = substr($0, RSTART + 6, RLENGTH - 6);" \
               . " match($0, /\"dur\": [0-9.]+/); d = substr($0, RSTART + 7, RLENGTH - 7);" \
               . " print g, t, d, k }'", input)
set title "One step, compute stream of each GPU"
set xlabel "time (ms)"
set ylabel "GPU"
set yrange [-0.6:*] reverse
set key outside right top
set style fill solid 1.0 noborder
color(k) = k == 1 ? 0x1f77b4 : k == 2 ? 0xff7f0e : k == 3 ? 0x2ca02c : k == 4 ? 0xd62728 : 0x7f7f7f
do for [term in "pngcairo svg"] {
    if (term eq "svg") { set terminal svg size 960,420; set output output.".svg" } \
    else { set terminal pngcairo size 960,420; set output output.".png" }
    plot data using (($2 + $3 / 2) / 1e3):1:($3 / 2e3):(0.35):(color($4)) \
              with boxxyerror linecolor rgb variable notitle, \
         for [k = 1:5] NaN with boxes linecolor rgb sprintf("#%06x", color(k)) \
              title word("forward backward recompute collective other", k)
}
