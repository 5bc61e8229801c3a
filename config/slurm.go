package config

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Slurm is how a slurm host (kind: slurm) submits the commands it runs:
// each build or benchmark step of a target is a Slurm job of its own,
// started with srun, and Slots targets are measured at once.
type Slurm struct {
	// Partition is the partition jobs go to; empty is the cluster's
	// default.
	Partition string
	// Gres are the generic resources each job asks for ("gpu:8").
	Gres string
	// TimeLimit is each job's Slurm time limit (srun --time); zero is the
	// partition's. A job Slurm ends at its limit failed on the
	// infrastructure, unlike a step that outlived its own timeout.
	TimeLimit time.Duration
	// Slots is the number of targets measured at once, each by jobs of
	// its own; 1 unless set.
	Slots int
	// Exclusive asks for whole nodes (srun --exclusive), as MLPerf runs
	// on Slurm do: no other job shares a node with a benchmark.
	Exclusive bool
	// SrunArgs are further arguments of every srun, one argument an item
	// (--account=perf, --qos=high, --constraint=h200).
	SrunArgs []string
}

// slurmKeys are the keys of a host that only a slurm host takes (slots,
// which every kind takes, is read into Slurm.Slots too).
var slurmKeys = []string{"partition", "gres", "time_limit", "exclusive", "sbatch_args", "srun_args"}

var (
	partitionList = regexp.MustCompile(`^[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*$`)
	gresList      = regexp.MustCompile(`^[A-Za-z0-9_.-]+(:[A-Za-z0-9_.-]+)*(,[A-Za-z0-9_.-]+(:[A-Za-z0-9_.-]+)*)*$`)
)

// srunOwned are srun options perfbot sets on every job itself: it names
// each job to find it again (and cancel it), and runs it in the target's
// tree.
var srunOwned = []string{"-J", "--job-name", "--jobid", "-D", "--chdir", "-o", "--output", "-e", "--error", "-i", "--input", "--pty"}

// slurm reads the keys of a slurm host item at path p and returns its
// workdir, resolved against dir, and its Slurm settings.
func (d *decoder) slurm(f map[string]field, item *yaml.Node, p, dir string) (string, Slurm) {
	s := Slurm{
		Partition: d.str(value(f, "partition"), p+".partition"),
		Gres:      d.str(value(f, "gres"), p+".gres"),
		Slots:     1,
		SrunArgs:  d.srunArgs(value(f, "srun_args"), p+".srun_args"),
	}
	if s.Partition != "" && !partitionList.MatchString(s.Partition) {
		d.errorf(value(f, "partition"), p+".partition", "%q is not a partition name (or a comma-separated list of them)", s.Partition)
	}
	if s.Gres != "" && !gresList.MatchString(s.Gres) {
		d.errorf(value(f, "gres"), p+".gres", "%q is not a generic resource list such as gpu:8 or gpu:h200:8", s.Gres)
	}
	if n := value(f, "time_limit"); n != nil {
		s.TimeLimit = d.duration(n, p+".time_limit")
		if s.TimeLimit > 0 && s.TimeLimit < time.Minute {
			d.errorf(n, p+".time_limit", "%s is under a minute: Slurm counts time limits in whole minutes", s.TimeLimit)
		}
	}
	if n := value(f, "slots"); n != nil {
		s.Slots = d.within(n, p+".slots", 1, maxSlots)
	}
	if n := value(f, "exclusive"); n != nil {
		s.Exclusive = d.boolean(n, p+".exclusive")
	}
	if n := value(f, "sbatch_args"); n != nil {
		d.errorf(n, p+".sbatch_args", "not used: perfbot starts each command as a job of its own with srun (its output streams back, and it ends with the command); write job options such as --account or --qos under srun_args")
	}
	for _, k := range []string{"address", "user", "key_file", "known_hosts"} {
		if n := value(f, k); n != nil {
			d.errorf(n, p+"."+k, "set on a slurm host, whose nodes perfbot reaches through srun; %s is for kind: ssh", k)
		}
	}
	workdir := d.str(value(f, "workdir"), p+".workdir")
	if workdir == "" {
		d.errorf(at(f["kind"].key, item), p+".workdir", "missing: a slurm host needs a workdir on storage that its nodes and this machine share")
		return "", s
	}
	return resolvePath(dir, workdir), s
}

// srunArgs reads srun_args: one argument an item, none of the options
// perfbot sets itself.
func (d *decoder) srunArgs(n *yaml.Node, p string) []string {
	var args []string
	for i, item := range d.scalars(n, p) {
		a := item.Value
		ip := fmt.Sprintf("%s[%d]", p, i)
		name, _, _ := strings.Cut(a, "=")
		switch {
		case strings.HasPrefix(a, "-") && strings.ContainsAny(a, " \t"):
			d.errorf(item, ip, "%q holds a space: write one argument an item (%q, or its value as the next item)", a, strings.Replace(strings.TrimSpace(a), " ", "=", 1))
		case strings.HasPrefix(a, "-") && ownedBySrun(name):
			d.errorf(item, ip, "%s is set by perfbot on every job (it names each job to find and cancel it, and runs it in the target's tree)", name)
		}
		args = append(args, a)
	}
	return args
}

func ownedBySrun(name string) bool {
	for _, o := range srunOwned {
		// Short options take their value glued on too (-Jname).
		if name == o || len(o) == 2 && strings.HasPrefix(name, o) && !strings.HasPrefix(name, "--") {
			return true
		}
	}
	return false
}

// notSlurm reports the slurm-only keys set on a host of another kind.
func (d *decoder) notSlurm(f map[string]field, p, kind string) {
	for _, k := range slurmKeys {
		if fl, ok := f[k]; ok {
			d.errorf(fl.key, p+"."+k, "%s is for kind: slurm; this host's kind is %s", k, kind)
		}
	}
}
