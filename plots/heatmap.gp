# heatmap.gp: the best tokens/s of the plans that fit, per (tp, pp), from
# a sweep CSV, titled with the model's name. gnuplot -e "input='sweep.csv'; output='heatmap'" heatmap.gp
# writes heatmap.png and heatmap.svg. Needs csvcols.awk beside it (dir).
if (!exists("dir")) dir = "."
data = sprintf("< awk -v cols=tp,pp,tokens_per_s -v where=fits=true -f %s/csvcols.awk '%s'" \
               . " | sort -k1,1n -k2,2n -k3,3g | awk '{best[$1\" \"$2] = $3} END {for (k in best) print k, best[k]}'" \
               . " | sort -k1,1n -k2,2n", dir, input)
model = system(sprintf("awk -v cols=model -f %s/csvcols.awk '%s' | head -n 1", dir, input))
set title sprintf("%s: best tokens/s per (tp, pp), plans that fit", model)
set xlabel "tensor parallel (tp)"
set ylabel "pipeline parallel (pp)"
set logscale xy 2
set xrange [0.7:11.3]
set yrange [0.7:11.3]
set cblabel "best tokens/s" offset 1,0
set format cb "%.1s%c"
set rmargin at screen 0.80
set palette defined (0 "#440154", 1 "#31688e", 2 "#35b779", 3 "#fde725")
set key off
set grid
do for [term in "pngcairo svg"] {
    if (term eq "svg") { set terminal svg size 720,540; set output output.".svg" } \
    else { set terminal pngcairo size 720,540; set output output.".png" }
    plot data using 1:2:3 with points pointtype 5 pointsize 5 linecolor palette, \
         data using 1:2:(sprintf("%.3g", $3)) with labels offset 0,-2.2 font ",8"
}
