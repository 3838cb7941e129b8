# bubble.gp: the measured bubble (CSV's bubble_percent) against micro-batches per step,
# beside the closed form 100 (p - 1)/(m + p - 1) %, from a sweep CSV of one
# pipeline depth p over several global batch sizes.
# gnuplot -e "input='bubble.csv'; output='bubble'; dir='plots'" bubble.gp
if (!exists("dir")) dir = "."
data = sprintf("< awk -v cols=micro_batches,bubble_percent,pp -f %s/csvcols.awk '%s' | sort -n", \
               dir, input)
p = real(system(sprintf("awk -v cols=pp -f %s/csvcols.awk '%s' | head -n 1", dir, input)))
set title sprintf("Pipeline bubble, %d stages (1F1B)", p)
set xlabel "micro-batches per step (m)"
set ylabel "bubble (% of the step)"
set logscale x 2
set yrange [0:100]
set key top right
set grid
f(m) = 100.0 * (p - 1) / (m + p - 1)
do for [term in "pngcairo svg"] {
    if (term eq "svg") { set terminal svg size 720,540; set output output.".svg" } \
    else { set terminal pngcairo size 720,540; set output output.".png" }
    plot [1:*] f(x) title "100 (p - 1)/(m + p - 1)" with lines linewidth 2, \
         data using 1:2 title "simulated" with points pointtype 7 pointsize 1.5
}
