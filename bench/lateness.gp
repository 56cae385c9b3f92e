# gnuplot: add-after lateness CDF, kwq against a clock_nanosleep baseline.
# Called by scripts/bench.sh with datafile, outfile, subtitle and ndelay set.
# datafile columns: percentile, then lateness (us) of kwq and of the
# baseline with N keys, and of kwq and the baseline with N/10 keys.
set terminal pngcairo size 900,560 font ",10"
set output outfile
set title "add-after lateness, keys with delays of 1-100 ms (per percentile, median of the runs)\n".subtitle
set xlabel "lateness = time the consumer got the key - due time (us, log scale)"
set ylabel "keys (%)"
set logscale x
set yrange [0:100]
set grid
set key top left
plot datafile using ($2 > 0 ? $2 : 0.01):1 with lines lw 2 lc 1 title sprintf("kwq add-after, %d keys", ndelay), \
     datafile using ($3 > 0 ? $3 : 0.01):1 with lines lw 2 lc 1 dt 2 title sprintf("clock\\_nanosleep(TIMER\\_ABSTIME), %d deadlines", ndelay), \
     datafile using ($4 > 0 ? $4 : 0.01):1 with lines lw 2 lc 2 title sprintf("kwq add-after, %d keys", ndelay / 10), \
     datafile using ($5 > 0 ? $5 : 0.01):1 with lines lw 2 lc 2 dt 2 title sprintf("clock\\_nanosleep(TIMER\\_ABSTIME), %d deadlines", ndelay / 10)
