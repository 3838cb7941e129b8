# memory.gp: each pipeline stage's memory peak by kind (the runtime's
# reserve included), stacked, against the GPU's capacity, from `plansim
# simulate --format json`.
# gnuplot -e "input='step.json'; output='memory'" memory.gp
data = sprintf("< grep '\"stage\":' '%s' | sed 's/[{}\",:]/ /g'", input)
capacity = real(system(sprintf("grep '\"capacity_bytes\"' '%s' | tr -dc '0-9'", input))) / 2**30
# each stage line, split on spaces: 2 stage, 18 params, 20 grads, 22 optimizer,
# 24 activations, 26 buffers, 28 the runtime's reserve (bytes)
set title "Memory peak per pipeline stage"
set xlabel "stage"
set ylabel "GiB"
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.7
set key outside right top
set yrange [0:capacity * 1.1]
set arrow from graph 0, first capacity to graph 1, first capacity nohead dashtype 2 linewidth 2
set label sprintf("HBM %.0f GiB", capacity) at graph 0.02, first capacity * 1.03
do for [term in "pngcairo svg"] {
    if (term eq "svg") { set terminal svg size 720,540; set output output.".svg" } \
    else { set terminal pngcairo size 720,540; set output output.".png" }
    plot data using ($18/2**30):xtic(2) title "params", \
         '' using ($20/2**30) title "grads", \
         '' using ($22/2**30) title "optimizer", \
         '' using ($24/2**30) title "activations", \
         '' using ($26/2**30) title "buffers", \
         '' using ($28/2**30) title "reserve"
}
