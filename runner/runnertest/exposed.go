package runnertest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Exposed returns the files under root (root itself not counted, as if it
// were open to all) that another user could read, by group or by others,
// and that hold one of secrets: the file is group- or world-readable and
// every directory between root and it can be entered by the same class.
func Exposed(t testing.TB, root string, secrets []string) []string {
	t.Helper()
	var found []string
	// open maps a directory to the permission classes (0o010 group,
	// 0o001 others) that can reach into it.
	open := map[string]fs.FileMode{root: 0o011}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		reach := open[filepath.Dir(p)]
		if d.IsDir() {
			open[p] = reach & info.Mode().Perm() & 0o011
			return nil
		}
		if !info.Mode().IsRegular() || (reach<<2)&info.Mode().Perm()&0o044 == 0 {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				found = append(found, p)
				break
			}
		}
		return nil
	})
	require.NoError(t, err)
	return found
}
