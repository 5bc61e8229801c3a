package testbed

import (
	"embed"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"strings"
)

// engineFiles holds the engine's sources, tests and documents as they are
// in this module.
//
//go:embed engine
var engineFiles embed.FS

// enginePath is the engine's import path inside perfbot's module.
const enginePath = "github.com/perfbot/perfbot/testbed/engine"

// Module is the module path of the generated repository.
const Module = "example.com/infer"

// goMod is the generated repository's go.mod: the engine needs nothing but
// the standard library.
const goMod = "module " + Module + "\n\ngo 1.26\n"

// engineTree returns the engine as the first commit holds it: its files at
// the repository's root, imports rewritten to Module, and a go.mod.
func engineTree() (tree, error) {
	t := tree{"go.mod": goMod}
	err := fs.WalkDir(engineFiles, "engine", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := engineFiles.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, "engine/")
		t[rel] = strings.ReplaceAll(string(data), enginePath, Module)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read embedded engine: %w", err)
	}
	return t, nil
}

// componentOf names the component of a repository path, as the components
// section of configs/testbed.yaml does; "" for paths outside every
// component.
func componentOf(p string) string {
	first, _, _ := strings.Cut(p, "/")
	switch first {
	case "communicator", "attention", "moe", "speculative", "model":
		return first
	}
	return ""
}

// enclosingFunc returns the name of the first function or method of a Go
// file whose declaration, doc comment included, overlaps lines
// start..start+size-1: "(*T).Name" for a method on a pointer, "T.Name" on a
// value. It returns "" when no function overlaps or the file is not Go.
func enclosingFunc(file, src string, start, size int) string {
	if path.Ext(file) != ".go" {
		return ""
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return ""
	}
	end := start + max(size, 1) - 1
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		first := fn.Pos()
		if fn.Doc != nil {
			first = fn.Doc.Pos()
		}
		if fset.Position(first).Line > end || fset.Position(fn.End()).Line < start {
			continue
		}
		return funcName(fn)
	}
	return ""
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	switch recv := fn.Recv.List[0].Type.(type) {
	case *ast.StarExpr:
		if id, ok := recv.X.(*ast.Ident); ok {
			return "(*" + id.Name + ")." + fn.Name.Name
		}
	case *ast.Ident:
		return recv.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
