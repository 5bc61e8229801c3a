package gitopstest

import (
	"archive/zip"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// GoProxy writes a Go module proxy in a directory of t.TempDir() that
// serves module at each of versions (version → path → content, paths
// relative to the module's root, go.mod included) in the layout the go
// command reads through GOPROXY=file://DIR: @v/list, and per version
// .info, .mod and .zip. It returns the directory. The module path must be
// lower case (proxies escape upper-case letters).
func GoProxy(t testing.TB, module string, versions map[string]map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	at := filepath.Join(dir, filepath.FromSlash(module), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatalf("gitopstest: %v", err)
	}
	var list []string
	for v, files := range versions {
		list = append(list, v)
		mod, ok := files["go.mod"]
		if !ok {
			t.Fatalf("gitopstest: %s@%s has no go.mod", module, v)
		}
		write(t, filepath.Join(at, v+".mod"), mod)
		write(t, filepath.Join(at, v+".info"), fmt.Sprintf(`{"Version":%q,"Time":"2026-01-01T00:00:00Z"}`+"\n", v))
		writeModuleZip(t, filepath.Join(at, v+".zip"), module+"@"+v, files)
	}
	slices.Sort(list)
	write(t, filepath.Join(at, "list"), strings.Join(list, "\n")+"\n")
	return dir
}

func write(t testing.TB, file, content string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatalf("gitopstest: %v", err)
	}
}

// writeModuleZip writes a module zip: every file under the prefix
// "module@version/", in a fixed order.
func writeModuleZip(t testing.TB, file, prefix string, files map[string]string) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatalf("gitopstest: %v", err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		w, err := zw.Create(prefix + "/" + name)
		if err == nil {
			_, err = w.Write([]byte(files[name]))
		}
		if err != nil {
			t.Fatalf("gitopstest: zip %s: %v", name, err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatalf("gitopstest: zip %s: %v", file, err)
	}
}
