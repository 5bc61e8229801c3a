package bench

import (
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/record"
)

// NCCL_DEBUG=INFO lines: "host:pid:tid [dev] NCCL INFO message". Newer
// NCCL versions may put a timestamp first, so the tag is looked for
// anywhere in the line.
var ncclDebugTag = regexp.MustCompile(`\bNCCL (INFO|WARN) ?(.*)$`)

// The messages read, from NCCL's own format strings (src/init.cc,
// src/enqueue.cc, src/misc/param.cc). Each is recognised by its first
// words, so that a line that starts like one and then does not read is a
// syntax error rather than silently ignored.
var (
	ncclVersionMsg  = regexp.MustCompile(`^NCCL version (\S+)$`)
	ncclEnvMsg      = regexp.MustCompile(`^(NCCL_\w+) set by environment to (.*)$`)
	ncclCommMsg     = regexp.MustCompile(`^comm 0x[0-9a-f]+ rank \d+ nRanks (\d+) nNodes (\d+)`)
	ncclNetworkMsg  = regexp.MustCompile(`^Using network (\S+)$`)
	ncclChannelPart = regexp.MustCompile(`^(\d+) ([a-z0-9]+) channels( per peer)?$`)
	ncclAlgoMsg     = regexp.MustCompile(`^(\w+): (\d+) Bytes -> Algo (\S+) proto (\S+)`)
	ncclTimingsMsg  = regexp.MustCompile(`^Init timings.*\btotal ([0-9.eE+-]+)`)
)

// ncclMessage is a message perfbot reads: its leading words and what
// reads it.
type ncclMessage struct {
	prefix *regexp.Regexp // the leading words; a line starting so must match re
	re     *regexp.Regexp
	read   func(d *ncclDebug, m []string) error
}

var ncclMessages = []ncclMessage{
	{regexp.MustCompile(`^NCCL version\b`), ncclVersionMsg, func(d *ncclDebug, m []string) error {
		if d.info.Version == "" {
			d.info.Version = m[1]
		}
		return nil
	}},
	{regexp.MustCompile(`^NCCL_\w+ set by environment\b`), ncclEnvMsg, func(d *ncclDebug, m []string) error {
		v := strings.TrimSuffix(strings.TrimSpace(m[2]), ".")
		if v == "" {
			return fmt.Errorf("%s has no value", m[1])
		}
		if d.info.Env == nil {
			d.info.Env = map[string]string{}
		}
		d.info.Env[m[1]] = v
		return nil
	}},
	{regexp.MustCompile(`^comm 0x[0-9a-f]+ rank \d+ nRanks\b`), ncclCommMsg, func(d *ncclDebug, m []string) error {
		ranks, err1 := strconv.Atoi(m[1])
		nodes, err2 := strconv.Atoi(m[2])
		if err1 != nil || err2 != nil {
			return fmt.Errorf("rank or node count out of range")
		}
		d.info.Ranks = max(d.info.Ranks, ranks)
		d.info.Nodes = max(d.info.Nodes, nodes)
		return nil
	}},
	{regexp.MustCompile(`^Using network\b`), ncclNetworkMsg, func(d *ncclDebug, m []string) error {
		d.info.Network = m[1]
		return nil
	}},
	{regexp.MustCompile(`^\d+ coll channels,`), regexp.MustCompile(`^\d+ coll channels,.*$`), readNCCLChannels},
	{regexp.MustCompile(`^\w+: \d+ Bytes ->`), ncclAlgoMsg, readNCCLAlgorithm},
	{regexp.MustCompile(`^Init timings\b`), ncclTimingsMsg, func(d *ncclDebug, m []string) error {
		v, err := parseNumber(m[1])
		if err != nil {
			return fmt.Errorf("total %q is not a number", m[1])
		}
		if !isFinite(v) || v < 0 {
			return fmt.Errorf("total %q is not a finite duration", m[1])
		}
		d.initSeconds = append(d.initSeconds, v)
		return nil
	}},
}

// readNCCLChannels reads "8 coll channels, 8 collnet channels, 0 nvls
// channels, 8 p2p channels, 8 p2p channels per peer".
func readNCCLChannels(d *ncclDebug, m []string) error {
	counts := map[string]int{}
	for _, part := range strings.Split(m[0], ",") {
		pm := ncclChannelPart.FindStringSubmatch(strings.TrimSpace(part))
		if pm == nil {
			return fmt.Errorf("%q is not a channel count", strings.TrimSpace(part))
		}
		n, err := strconv.Atoi(pm[1])
		if err != nil {
			return fmt.Errorf("channel count %q out of range", pm[1])
		}
		counts[pm[2]+pm[3]] = n
	}
	d.info.Channels = counts
	return nil
}

// readNCCLAlgorithm reads "AllReduce: 1048576 Bytes -> Algo RING proto
// SIMPLE channel{Lo..Hi}={0..7}", folding the calls of one collective,
// algorithm and protocol into one choice over their sizes.
func readNCCLAlgorithm(d *ncclDebug, m []string) error {
	size, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil {
		return fmt.Errorf("size %q out of range", m[2])
	}
	for i := range d.info.Algorithms {
		a := &d.info.Algorithms[i]
		if a.Collective == m[1] && a.Algorithm == m[3] && a.Protocol == m[4] {
			a.MinBytes, a.MaxBytes = min(a.MinBytes, size), max(a.MaxBytes, size)
			a.Calls++
			return nil
		}
	}
	d.info.Algorithms = append(d.info.Algorithms, record.NCCLAlgorithm{
		Collective: m[1], Algorithm: m[3], Protocol: m[4], MinBytes: size, MaxBytes: size, Calls: 1})
	return nil
}

// ncclDebug is what NCCL's lines said so far.
type ncclDebug struct {
	info        record.NCCLInfo
	initSeconds []float64
	lines       int // NCCL INFO lines seen
	warn        int // first NCCL WARN line, 1-based; 0 when none
	warnText    string
}

// readNCCLDebug reads every NCCL line of lines.
func readNCCLDebug(lines []string, file string) (*ncclDebug, error) {
	d := &ncclDebug{}
	for i, line := range lines {
		m := ncclDebugTag.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if m[1] == "WARN" {
			if d.warn == 0 {
				d.warn, d.warnText = i+1, strings.TrimSpace(line)
			}
			continue
		}
		d.lines++
		msg := strings.TrimSpace(m[2])
		for _, nm := range ncclMessages {
			if !nm.prefix.MatchString(msg) {
				continue
			}
			mm := nm.re.FindStringSubmatch(msg)
			err := fmt.Errorf("does not read as NCCL prints it")
			if mm != nil {
				err = nm.read(d, mm)
			}
			if err != nil {
				return nil, &OutputError{File: file, Line: i + 1, Text: strings.TrimSpace(line),
					Msg: "NCCL line: " + err.Error(), Err: ErrSyntax}
			}
			break
		}
	}
	if d.lines == 0 {
		return nil, noResults(file, lines, "NCCL INFO lines")
	}
	return d, nil
}

// NCCLDebug reads what the NCCL_DEBUG=INFO lines of a benchmark's output
// say NCCL did: its version, the variables it reported "set by
// environment", the communicator's size, the network, the channel counts
// and, where NCCL_DEBUG_SUBSYS includes TUNING, the algorithm and protocol
// it chose for each collective. Lines that are not NCCL's are skipped, and
// so are NCCL's WARN lines (ParseNCCLDebug fails on them). Output without
// any NCCL INFO line is an ErrNoResults error; a line of a kind it reads
// that does not read is an ErrSyntax error quoting it.
func NCCLDebug(r io.Reader, file string) (*record.NCCLInfo, error) {
	lines, err := readLines(r, file)
	if err != nil {
		return nil, err
	}
	d, err := readNCCLDebug(lines, file)
	if err != nil {
		return nil, err
	}
	return &d.info, nil
}

// parseNCCLDebug is the nccl-debug format: NCCL_DEBUG=INFO lines as
// samples. The numbers NCCLDebug reads become samples in "value": "ranks",
// "nodes", "channels/<kind>" ("channels/coll", "channels/p2p per peer")
// and "<collective>/algo=<A>/proto=<P>/calls"; each "Init timings" line
// gives an "init" sample in s. A WARN line is ErrBenchmarkFailed: NCCL
// warns when something went wrong (a CUDA failure, a peer lost).
func parseNCCLDebug(r io.Reader, file string, _ Options) ([]record.Sample, error) {
	lines, err := readLines(r, file)
	if err != nil {
		return nil, err
	}
	d, err := readNCCLDebug(lines, file)
	if err != nil {
		return nil, err
	}
	if d.warn > 0 {
		return nil, &OutputError{File: file, Line: d.warn, Text: d.warnText, Msg: "NCCL warned", Err: ErrBenchmarkFailed}
	}
	var samples []record.Sample
	add := func(name, unit string, v float64, better record.Better) {
		samples = append(samples, record.Sample{Name: name, Unit: unit, Value: v, Better: better})
	}
	if d.info.Ranks > 0 {
		add("ranks", "value", float64(d.info.Ranks), "")
		add("nodes", "value", float64(d.info.Nodes), "")
	}
	for _, kind := range slices.Sorted(maps.Keys(d.info.Channels)) {
		add("channels/"+kind, "value", float64(d.info.Channels[kind]), "")
	}
	for _, a := range d.info.Algorithms {
		add(a.Collective+"/algo="+a.Algorithm+"/proto="+a.Protocol+"/calls", "value", float64(a.Calls), "")
	}
	for _, s := range d.initSeconds {
		add("init", "s", s, record.Lower)
	}
	if len(samples) == 0 {
		return nil, noResults(file, lines, "NCCL counts, choices or init timings")
	}
	return samples, nil
}
