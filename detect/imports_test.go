package detect

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPure checks that the package imports only the standard library,
// stats and record: detection runs nothing and reads nothing.
func TestPure(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	allowed := map[string]bool{"github.com/perfbot/perfbot/stats": true, "github.com/perfbot/perfbot/record": true}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			std := !strings.Contains(strings.Split(path, "/")[0], ".")
			assert.True(t, std || allowed[path], "%s imports %s", file, path)
			assert.NotContains(t, []string{"os", "io", "net", "net/http", "os/exec", "io/fs"}, path, "%s imports %s", file, path)
		}
	}
}
