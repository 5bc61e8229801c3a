package runner

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"
)

func TestCPUList(t *testing.T) {
	for _, tc := range []struct {
		name string
		cpus []int
		want string
	}{
		{name: "none", want: ""},
		{name: "one", cpus: []int{5}, want: "5"},
		{name: "a range", cpus: []int{0, 1, 2, 3}, want: "0-3"},
		{name: "ranges and singles", cpus: []int{0, 1, 2, 3, 8, 10, 11}, want: "0-3,8,10-11"},
		{name: "the last CPU a set holds", cpus: []int{1022, 1023}, want: "1022-1023"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var set unix.CPUSet
			for _, c := range tc.cpus {
				set.Set(c)
			}
			assert.Equal(t, tc.want, cpuList(&set))
		})
	}
}

func TestLocalLoad(t *testing.T) {
	load, affinity := localLoad()
	assert.Regexp(t, regexp.MustCompile(`^\d+\.\d+ \d+\.\d+ \d+\.\d+$`), load, "/proc/loadavg's three averages")
	assert.Regexp(t, regexp.MustCompile(`^\d+(-\d+)?(,\d+(-\d+)?)*$`), affinity, "perfbot's CPU list")
}
