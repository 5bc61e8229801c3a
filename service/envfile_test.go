package service

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		input   string
		want    map[string]string
		wantErr string
	}{
		{name: "pairs, comments, export and quotes", input: "# nccl\nNCCL_PROTO=LL\nexport NCCL_ALGO=\"Ring\"\n\nHF_HOME='/data/hf'\nEMPTY=\n",
			want: map[string]string{"NCCL_PROTO": "LL", "NCCL_ALGO": "Ring", "HF_HOME": "/data/hf", "EMPTY": ""}},
		{name: "CRLF line ends", input: "A=1\r\nB=2\r\n", want: map[string]string{"A": "1", "B": "2"}},
		{name: "a byte order mark before the name", input: "\ufeffNCCL_PROTO=LL\n", wantErr: `good.env:1: "\ufeffNCCL_PROTO" is not a variable name`},
		{name: "a semicolon in the name", input: "A;B=1\n", wantErr: `good.env:1: "A;B" is not a variable name`},
		{name: "a dollar in the name", input: "OK=1\nC$D=1\n", wantErr: `good.env:2: "C$D" is not a variable name`},
		{name: "a name starting with a digit", input: "1BAD=1\n", wantErr: `"1BAD" is not a variable name`},
		{name: "a NUL in the value", input: "A=x\x00y\n", wantErr: "good.env:1: the value of A holds a NUL byte"},
		{name: "no equals sign", input: "NCCL_PROTO LL\n", wantErr: "good.env:1: want NAME=VALUE"},
		{name: "a name set twice", input: "A=1\nA=2\n", wantErr: "good.env:2: A is set again (first on line 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseEnv("good.env", []byte(tc.input))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
