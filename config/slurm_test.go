package config

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSlurmHost(t *testing.T) {
	c, err := Parse([]byte(minimal+`hosts:
  - name: cluster
    kind: slurm
    partition: h200
    gres: gpu:8
    time_limit: 90m
    slots: 4
    exclusive: true
    workdir: ../shared/perfbot
    srun_args: [--account=perf, --qos, high]
  - name: small
    kind: slurm
    workdir: /lustre/perfbot
`), "/srv/perf/perfbot.yaml")
	require.NoError(t, err)
	assert.Equal(t, []Host{
		{Name: "cluster", Kind: HostSlurm, Workdir: "/srv/shared/perfbot", Slots: 4, Slurm: Slurm{
			Partition: "h200", Gres: "gpu:8", TimeLimit: 90 * time.Minute, Slots: 4, Exclusive: true,
			SrunArgs: []string{"--account=perf", "--qos", "high"},
		}},
		{Name: "small", Kind: HostSlurm, Workdir: "/lustre/perfbot", Slurm: Slurm{Slots: 1}},
	}, c.Hosts)
}

func TestParseSlurmErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		host string // the host item's keys after "- name: gpu", indented by four
		want string // the first error
	}{
		{
			name: "no workdir",
			host: "    kind: slurm\n",
			want: "perfbot.yaml:14: hosts[0].workdir: missing: a slurm host needs a workdir on storage that its nodes and this machine share",
		},
		{
			name: "slots not a number",
			host: "    kind: slurm\n    workdir: /shared\n    slots: four\n",
			want: `perfbot.yaml:16: hosts[0].slots: bad number "four" (want a whole number)`,
		},
		{
			name: "no slots",
			host: "    kind: slurm\n    workdir: /shared\n    slots: 0\n",
			want: "perfbot.yaml:16: hosts[0].slots: 0 must be at least 1",
		},
		{
			name: "time limit under a minute",
			host: "    kind: slurm\n    workdir: /shared\n    time_limit: 30s\n",
			want: "perfbot.yaml:16: hosts[0].time_limit: 30s is under a minute: Slurm counts time limits in whole minutes",
		},
		{
			name: "time limit not a duration",
			host: "    kind: slurm\n    workdir: /shared\n    time_limit: 2 hours\n",
			want: `perfbot.yaml:16: hosts[0].time_limit: bad duration "2 hours" (want a Go duration such as 90s, 10m or 1h30m)`,
		},
		{
			name: "exclusive not a boolean",
			host: "    kind: slurm\n    workdir: /shared\n    exclusive: whole\n",
			want: `perfbot.yaml:16: hosts[0].exclusive: want true or false, got "whole"`,
		},
		{
			name: "gres with a space",
			host: "    kind: slurm\n    workdir: /shared\n    gres: gpu 8\n",
			want: `perfbot.yaml:16: hosts[0].gres: "gpu 8" is not a generic resource list such as gpu:8 or gpu:h200:8`,
		},
		{
			name: "partition with a space",
			host: "    kind: slurm\n    workdir: /shared\n    partition: gpu nodes\n",
			want: `perfbot.yaml:16: hosts[0].partition: "gpu nodes" is not a partition name (or a comma-separated list of them)`,
		},
		{
			name: "srun argument with a space",
			host: "    kind: slurm\n    workdir: /shared\n    srun_args: [--account perf]\n",
			want: `perfbot.yaml:16: hosts[0].srun_args[0]: "--account perf" holds a space: write one argument an item ("--account=perf", or its value as the next item)`,
		},
		{
			name: "srun argument perfbot sets",
			host: "    kind: slurm\n    workdir: /shared\n    srun_args:\n      - --time=10\n      - --job-name=mine\n",
			want: "perfbot.yaml:18: hosts[0].srun_args[1]: --job-name is set by perfbot on every job (it names each job to find and cancel it, and runs it in the target's tree)",
		},
		{
			name: "short srun option perfbot sets",
			host: "    kind: slurm\n    workdir: /shared\n    srun_args: [-Jmine]\n",
			want: "perfbot.yaml:16: hosts[0].srun_args[0]: -Jmine is set by perfbot on every job (it names each job to find and cancel it, and runs it in the target's tree)",
		},
		{
			name: "sbatch arguments",
			host: "    kind: slurm\n    workdir: /shared\n    sbatch_args: [--qos=high]\n",
			want: "perfbot.yaml:16: hosts[0].sbatch_args: not used: perfbot starts each command as a job of its own with srun (its output streams back, and it ends with the command); write job options such as --account or --qos under srun_args",
		},
		{
			name: "ssh key on a slurm host",
			host: "    kind: slurm\n    workdir: /shared\n    address: login1\n",
			want: "perfbot.yaml:16: hosts[0].address: set on a slurm host, whose nodes perfbot reaches through srun; address is for kind: ssh",
		},
		{
			name: "slurm key on a local host",
			host: "    partition: gpu\n",
			want: "perfbot.yaml:14: hosts[0].partition: partition is for kind: slurm; this host's kind is local",
		},
		{
			name: "slurm key on an ssh host",
			host: "    kind: ssh\n    address: gpu1\n    workdir: /data/perfbot\n    gres: gpu:8\n",
			want: "perfbot.yaml:17: hosts[0].gres: gres is for kind: slurm; this host's kind is ssh",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(minimal+"hosts:\n  - name: gpu\n"+tc.host), "perfbot.yaml")
			var es Errors
			require.True(t, errors.As(err, &es), "error %v is not Errors", err)
			assert.Equal(t, tc.want, es[0].Error(), "all errors:\n%v", err)
		})
	}
}
