# csvcols.awk: prints the named columns of a plansim CSV, space-separated.
# Quoted cells (layers_per_stage, "12,12") are read whole. Usage:
#   awk -v cols=tp,pp,tokens_per_s [-v where=fits=true] -f csvcols.awk FILE.csv
function split_csv(line, out,    n, i, c, q, cell) {
    n = 0; q = 0; cell = ""
    for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (c == "\"") q = !q
        else if (c == "," && !q) { out[++n] = cell; cell = "" }
        else cell = cell c
    }
    out[++n] = cell
    return n
}
NR == 1 {
    n = split_csv($0, head)
    for (i = 1; i <= n; i++) index_of[head[i]] = i
    k = split(cols, want, ",")
    if (where != "") { split(where, cond, "="); wcol = index_of[cond[1]]; wval = cond[2] }
    next
}
{
    split_csv($0, cell)
    if (where != "" && cell[wcol] != wval) next
    line = ""
    for (i = 1; i <= k; i++) line = line (i > 1 ? " " : "") cell[index_of[want[i]]]
    print line
}
