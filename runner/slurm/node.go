package slurm

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/internal/proc"
)

var _ runner.NodeDescriber = (*Host)(nil)

// DescribeNode is what scontrol show node says of node: its CPUs,
// memory, generic resources (the GPUs) and trackable resources, read
// once per node and kept.
func (s *Host) DescribeNode(ctx context.Context, node string) (record.ClusterNode, error) {
	if n, ok := s.nodes.Load(node); ok {
		return n.(record.ClusterNode), nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "scontrol", "--oneliner", "show", "node", node).CombinedOutput()
	if err != nil {
		return record.ClusterNode{}, s.infra("describe node "+node, fmt.Errorf("scontrol show node: %w: %s", err, proc.Clip(strings.TrimSpace(string(out)), 200)))
	}
	n, err := parseSlurmNode(string(out))
	if err != nil {
		return record.ClusterNode{}, s.infra("describe node "+node, err)
	}
	s.nodes.Store(node, n)
	return n, nil
}

// slurmKey finds the KEY= of scontrol's one-line records: a word of
// letters at the start or after a blank. Values hold no such word, but
// may hold blanks (OS=Linux 6.8.0-45-generic #45-Ubuntu SMP …) and '='
// (CfgTRES=cpu=224,mem=2000G).
var slurmKey = regexp.MustCompile(`(?:^|\s)([A-Za-z][A-Za-z0-9_]*)=`)

// parseSlurmNode reads one node of scontrol --oneliner show node.
func parseSlurmNode(out string) (record.ClusterNode, error) {
	line := strings.TrimSpace(out)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	fields := map[string]string{}
	keys := slurmKey.FindAllStringSubmatchIndex(line, -1)
	for j, k := range keys {
		end := len(line)
		if j+1 < len(keys) {
			end = keys[j+1][0]
		}
		fields[line[k[2]:k[3]]] = strings.TrimSpace(line[k[1]:end])
	}
	name := fields["NodeName"]
	if name == "" {
		return record.ClusterNode{}, fmt.Errorf("scontrol show node: no NodeName in %q", proc.Clip(line, 200))
	}
	n := record.ClusterNode{
		Name:       name,
		Arch:       fields["Arch"],
		OS:         fields["OS"],
		Gres:       nullable(fields["Gres"]),
		CfgTRES:    fields["CfgTRES"],
		Features:   nullable(fields["AvailableFeatures"]),
		Partitions: fields["Partitions"],
	}
	for key, dst := range map[string]*int{"CPUTot": &n.CPUs, "RealMemory": &n.RealMemoryMB} {
		v, ok := fields[key]
		if !ok {
			continue
		}
		x, err := strconv.Atoi(v)
		if err != nil {
			return record.ClusterNode{}, fmt.Errorf("scontrol show node %s: %s=%q is not a number", name, key, v)
		}
		*dst = x
	}
	return n, nil
}

// nullable is v, or "" for Slurm's "(null)".
func nullable(v string) string {
	if v == "(null)" {
		return ""
	}
	return v
}
