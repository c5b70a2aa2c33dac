#!/usr/bin/awk -f
# figure7.awk - draw tests/gpu/figure7.sh's log as seed 000's figure 7 (an SVG on stdout):
# picoseconds per node against stencil size K, log-log, one panel per precision, a mark per
# kernel and family, and the streaming limit measured in the same runs as a dashed line.
#   awk -f tests/gpu/figure7.awk docs/bench/h100-figure7.txt > docs/figure7.svg

function lx(k) { return X0 + (log(k) - log(KMIN)) / (log(KMAX) - log(KMIN)) * W }
function ly(t) { return Y0 + H - (log(t) - log(TMIN)) / (log(TMAX) - log(TMIN)) * H }

BEGIN {
	KMIN = 5; KMAX = 1000; TMIN = 2; TMAX = 3000; W = 420; H = 300; X0 = 60; Y0 = 30
	color["general"] = "#d62728"; color["leggy"] = "#1f77b4"; color["leggy-shared"] = "#9467bd"
	color["leggy-shared2"] = "#8c564b"; color["shell-shared"] = "#2ca02c"
	color["shell-vec"] = "#17becf"; color["slice-vec"] = "#000000"
	shape["leggy"] = "circle"; shape["compact-in-space"] = "square"; shape["box-compact"] = "diamond"
}
/^bandwidth/ {
	for (i = 1; i <= NF; i++)
		if ($i == "limit") lim = $(i + 1)
	prec = ($0 ~ /24 bytes/) ? 8 : 4
	limit[prec] = 1000 / lim	# ps per node
	next
}
/^scheme/ {
	family = $2; if (family == "leggy") family = "leggy"
	match($0, /\(([0-9]+) points\)/); K = substr($0, RSTART + 1, RLENGTH - 9) + 0
	next
}
NF >= 6 && $2 ~ /^float/ {
	n++; pk[n] = K; pp[n] = ($2 == "float64") ? 8 : 4; pt[n] = 1000 / $6; pn[n] = $1; pf[n] = family
}
END {
	printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n", 2 * (W + 90) + 20, H + 140
	for (panel = 0; panel < 2; panel++) {
		p = panel ? 8 : 4; ox = panel * (W + 90)
		printf "<g transform=\"translate(%d,0)\">\n", ox
		printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>\n", X0, Y0, W, H
		printf "<text x=\"%d\" y=\"18\" font-size=\"13\">%s: time per node against K (H100)</text>\n", X0, p == 4 ? "float32" : "float64"
		for (k = 10; k <= KMAX; k *= 10)
			printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/><text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n", lx(k), Y0, lx(k), Y0 + H, lx(k), Y0 + H + 14, k
		for (t = 10; t <= TMAX; t *= 10)
			printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d ps</text>\n", X0, ly(t), X0 + W, ly(t), X0 - 4, ly(t) + 4, t
		printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">stencil points K</text>\n", X0 + W / 2, Y0 + H + 30
		if (limit[p] > 0)
			printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#000\" stroke-dasharray=\"5,4\"/><text x=\"%d\" y=\"%.1f\">streaming limit %.2f ps (%d bytes)</text>\n", X0, ly(limit[p]), X0 + W, ly(limit[p]), X0 + 6, ly(limit[p]) - 4, limit[p], 3 * p
		for (i = 1; i <= n; i++) {
			if (pp[i] != p || !(pn[i] in color)) continue
			x = lx(pk[i]); y = ly(pt[i]); c = color[pn[i]]
			if (shape[pf[i]] == "square")
				printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"6\" height=\"6\" fill=\"none\" stroke=\"%s\"/>\n", x - 3, y - 3, c
			else if (shape[pf[i]] == "diamond")
				printf "<path d=\"M%.1f %.1f l4 4 l-4 4 l-4 -4 z\" fill=\"none\" stroke=\"%s\"/>\n", x, y - 4, c
			else
				printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"none\" stroke=\"%s\"/>\n", x, y, c
		}
		printf "</g>\n"
	}
	ly0 = H + 70; i = 0
	for (k in color) {
		printf "<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n", X0 + 110 * (i % 6), ly0 + 18 * int(i / 6), color[k], X0 + 110 * (i % 6) + 8, ly0 + 18 * int(i / 6) + 4, k
		i++
	}
	printf "<text x=\"%d\" y=\"%d\">marks: circle leggy, square compact-in-space, diamond box-compact</text>\n", X0, ly0 + 40
	printf "</svg>\n"
}
