package ssh

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/internal/proc"
)

// factsScript probes the host as localFacts probes this machine: one
// "key value" line per fact, then nvidia-smi's CSV after a gpu-query line
// on a GPU host. Each program is bounded by factTimeout.
var factsScript = fmt.Sprintf(`t="timeout %d"
command -v timeout > /dev/null || t=
echo "os $(uname -s) $(uname -m)"
echo "kernel $(uname -r)"
echo "host $(hostname 2> /dev/null || cat /proc/sys/kernel/hostname)"
echo "cpus $(getconf _NPROCESSORS_ONLN 2> /dev/null || nproc)"
echo "cpu $(grep -m1 '^model name' /proc/cpuinfo 2> /dev/null | cut -d: -f2-)"
echo "distro $(. /etc/os-release 2> /dev/null; echo "$PRETTY_NAME")"
if command -v go > /dev/null; then echo "go $($t go version 2>&1 | head -n1)"; fi
if command -v python3 > /dev/null; then echo "python $($t python3 --version 2>&1 | head -n1)"; fi
if command -v nvidia-smi > /dev/null; then
	echo gpu-query
	$t nvidia-smi --query-gpu=%s --format=csv,nounits 2>&1 || echo "gpu-failed $?"
fi
`, int(runner.FactTimeout.Seconds()), strings.Join(runner.GPUQueryFields, ","))

// Facts describes the host, probed over SSH on the first call and cached;
// an error (nvidia-smi present but failing) is not cached.
func (s *Host) Facts(ctx context.Context) (record.Fingerprint, error) {
	s.mu.Lock()
	cached := s.facts
	s.mu.Unlock()
	if cached == nil {
		out, err := s.output(ctx, "collect host facts", factsScript, nil)
		if err != nil {
			return record.Fingerprint{}, err
		}
		fp, err := parseFacts(out)
		if err != nil {
			return record.Fingerprint{}, s.infra("collect host facts", err)
		}
		s.mu.Lock()
		s.facts = &fp
		cached = s.facts
		s.mu.Unlock()
	}
	fp := *cached
	fp.GPUs = slices.Clone(fp.GPUs)
	return fp, nil
}

// goArch maps uname -m to Go's names, so a host's OS reads as a local
// one's (linux/amd64).
var goArch = map[string]string{"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64", "i686": "386", "ppc64le": "ppc64le", "s390x": "s390x"}

// parseFacts reads factsScript's output.
func parseFacts(out []byte) (record.Fingerprint, error) {
	var fp record.Fingerprint
	head, gpu, isGPU := bytes.Cut(out, []byte("gpu-query\n"))
	sc := bufio.NewScanner(bytes.NewReader(head))
	distro := ""
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		v = strings.TrimSpace(v)
		switch k {
		case "os":
			sys, arch, _ := strings.Cut(v, " ")
			if a, ok := goArch[arch]; ok {
				arch = a
			}
			fp.OS = strings.ToLower(sys) + "/" + arch
		case "kernel":
			fp.Kernel = v
		case "host":
			fp.Host = v
		case "cpus":
			fp.CPUs, _ = strconv.Atoi(v)
		case "cpu":
			fp.CPUModel = v
		case "distro":
			distro = v
		case "go":
			fp.GoVersion = strings.TrimPrefix(v, "go version ")
		case "python":
			fp.Python = v
		}
	}
	if distro != "" {
		fp.OS += " (" + distro + ")"
	}
	if !isGPU {
		return fp, nil
	}
	if i := bytes.LastIndex(gpu, []byte("gpu-failed ")); i >= 0 {
		first, _, _ := strings.Cut(strings.TrimSpace(string(gpu[:i])), "\n")
		return fp, fmt.Errorf("nvidia-smi failed (%s): %s", strings.TrimSpace(string(gpu[i:])), proc.Clip(first, 200))
	}
	gpus, err := runner.ParseGPUQuery(bytes.NewReader(gpu))
	if err != nil {
		return fp, fmt.Errorf("nvidia-smi: %w", err)
	}
	fp.GPUs = gpus
	return fp, nil
}
