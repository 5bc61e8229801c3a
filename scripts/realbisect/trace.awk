# trace.awk: where one perfbot bisection's runs and wall time went, from
# its debug log (perfbot -v bisect ... 2> stderr.log). Prints one line:
#   phases=verify:V,bisect:B,residual:R,other:O build_s=X bench_s=Y
# A phase's runs are the fresh runs of its "measured" records; other is
# the runs of the counter file (-v runs=N) that no such record names: the
# confirmation's, which logs no record of its own; it is "?" when the
# counter holds fewer runs than the records name (a counter the benchmark
# did not write to, or no -v runs). build_s and bench_s are
# the time from each build (bench) step's start to the next record.
function secs(ts,   t) {
	# time=2026-12-01T18:53:16.754Z
	t = substr(ts, 17, 12)
	split(t, hms, ":")
	return hms[1] * 3600 + hms[2] * 60 + hms[3]
}
/^time=/ {
	now = secs($1)
	if (open != "") d[open] += now - since
	open = ""
	if ($0 ~ /msg=step/ && $0 ~ /phase=build/) { open = "build"; since = now }
	if ($0 ~ /msg=step/ && $0 ~ /phase=bench/) { open = "bench"; since = now }
	if ($0 ~ /msg=measured/) {
		p = c = ""; n = 0
		for (k = 1; k <= NF; k++) {
			if ($k ~ /^phase=/) p = substr($k, 7)
			if ($k ~ /^commit=/) c = substr($k, 8)
			if ($k ~ /^n=/) n = substr($k, 3) + 0
		}
		if (n > seen[c]) { fresh[p] += n - seen[c]; seen[c] = n }
	}
}
END {
	named = fresh["verify"] + fresh["bisect"] + fresh["residual"]
	other = runs - named
	if (runs == "" || other < 0) other = "?"
	printf "phases=verify:%d,bisect:%d,residual:%d,other:%s build_s=%.1f bench_s=%.1f\n",
		fresh["verify"], fresh["bisect"], fresh["residual"], other, d["build"], d["bench"]
}
