package minimize_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/perfbot/perfbot/minimize"
)

func TestEnvDiff(t *testing.T) {
	for _, tc := range []struct {
		name      string
		good, bad map[string]string
		want      []string
	}{
		{"same", map[string]string{"A": "1"}, map[string]string{"A": "1"}, nil},
		{"changed value", map[string]string{"A": "1", "B": "x"}, map[string]string{"A": "2", "B": "x"}, []string{"A"}},
		{"unset on the bad side", map[string]string{"A": "1", "B": "2"}, map[string]string{"A": "1"}, []string{"B"}},
		{"unset on the good side", map[string]string{}, map[string]string{"Z": "1", "C": ""}, []string{"C", "Z"}},
		{"empty is a value", map[string]string{"A": ""}, nil, []string{"A"}},
		{"both nil", nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, minimize.EnvDiff(tc.good, tc.bad))
		})
	}
}

func TestEnvConfiguration(t *testing.T) {
	good := map[string]string{"NCCL_PROTO": "Simple", "OMP_NUM_THREADS": "8", "HOME": "/root"}
	bad := map[string]string{"NCCL_PROTO": "LL", "NCCL_ALGO": "Ring", "HOME": "/root"}
	for _, tc := range []struct {
		name string
		set  []string
		want map[string]string
	}{
		{"empty set is the good environment", nil, good},
		{"value from bad", []string{"NCCL_PROTO"}, map[string]string{"NCCL_PROTO": "LL", "OMP_NUM_THREADS": "8", "HOME": "/root"}},
		{"set only on bad", []string{"NCCL_ALGO"}, map[string]string{"NCCL_PROTO": "Simple", "NCCL_ALGO": "Ring", "OMP_NUM_THREADS": "8", "HOME": "/root"}},
		{"unset on bad", []string{"OMP_NUM_THREADS"}, map[string]string{"NCCL_PROTO": "Simple", "HOME": "/root"}},
		{"full difference is the bad environment", minimize.EnvDiff(good, bad), bad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, minimize.EnvConfiguration(good, bad, tc.set))
		})
	}
	assert.Equal(t, "Simple", good["NCCL_PROTO"], "inputs are not modified")
}
