# gnuplot: per-key cost of an add against the number of keys in the queue.
# Called by scripts/bench.sh with datafile, outfile, subtitle and floor set.
# datafile columns: size, add-after median/min/max, add median/min/max (ns/key).
set terminal pngcairo size 900,560 font ",10"
set output outfile
set title "per-key cost against queue size, 32-byte keys (median, min-max bars)\n".subtitle
set xlabel "keys already in the queue (log scale)"
set ylabel "ns per key"
set logscale x
set yrange [0:*]
set grid
set key top left
plot datafile using 1:2:3:4 with yerrorlines lw 2 title "add-after (keys waiting on the timerqueue)", \
     datafile using 1:5:6:7 with yerrorlines lw 2 title "add (keys queued)", \
     floor with lines dt 2 lc rgb "gray40" title "no-op ioctl floor"
