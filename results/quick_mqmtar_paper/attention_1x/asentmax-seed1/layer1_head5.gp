# Attention weights: target rows against input positions; run `gnuplot layer1_head5.gp` in this folder.
set terminal pngcairo noenhanced size 520,440
set output 'layer1_head5.png'
set title 'ASEntmax (entmax15 + asentmax) / nape' . "\n" . 'layer 1 head 5'
set xlabel 'key: input position (BOS, source, SEP at 67, target)'
set ylabel 'query: target symbol'
set cblabel 'attention weight (white: exactly 0)'
set logscale cb
set cbrange [0.0001:1]
set format cb '%.0e'
set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', 4 '#fde725')
set tics out
set border linecolor 'gray40'
set rmargin 11
set xrange [-0.5:71.5]
set yrange [2.5:-0.5]
plot 'layer1_head5.dat' matrix using ($1*1):($2*1):($3 > 0 ? ($3 < 0.0001 ? 0.0001 : $3) : NaN) with image notitle
set terminal svg noenhanced size 520,440
set output 'layer1_head5.svg'
replot
