package gitops

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Dependencies returns, for every hunk that needs others to build, the
// sorted IDs of the hunks it needs. Hunks that need nothing are absent.
//
// The scan looks only at added lines, of Go and Python files:
//
//   - A hunk that uses a name another hunk declares needs that hunk. Go
//     declarations are functions, methods, types, struct fields, interface
//     methods, package-level vars and consts, and, within one function,
//     parameters, local vars and "name :=" (local names only link hunks of
//     the same function, so two functions' err variables stay apart).
//     Python declarations are def and class at any depth (dunder methods
//     excepted) and assignments at the top level.
//   - A hunk that imports a package or module a new file provides needs the
//     new file's hunk: a Go import path ending in the new file's directory,
//     a Python import naming the new module (relative imports resolved).
//
// Names match textually, without type information, so the map may list
// more than is needed; closing a subset over it costs a larger subset,
// while missing a dependency costs a configuration that does not build.
// Dependencies through removed lines (a hunk that deletes a function
// another hunk stops calling) are not found.
func (p *Patch) Dependencies() map[string][]string {
	s := &defUse{
		decls: map[symbol]map[string]bool{},
		uses:  map[string]map[symbol]bool{},
	}
	for _, fd := range p.Files {
		switch {
		case fd.new == nil:
		case isGo(fd.Path()):
			s.scanGo(fd)
		case isPython(fd.Path()):
			s.scanPython(fd)
		}
	}
	deps := map[string][]string{}
	add := func(from, to string) {
		if from == to {
			return
		}
		for _, d := range deps[from] {
			if d == to {
				return
			}
		}
		deps[from] = append(deps[from], to)
	}
	for h, used := range s.uses {
		for sym := range used {
			for d := range s.decls[sym] {
				add(h, d)
			}
			if sym.scope != "" {
				for d := range s.decls[symbol{lang: sym.lang, name: sym.name}] {
					add(h, d)
				}
			}
		}
	}
	for _, imp := range s.imports {
		for _, nf := range p.Files {
			if nf.Kind == Added && provides(nf.NewPath, imp) {
				add(imp.hunk, nf.Hunks[0].ID)
			}
		}
	}
	for _, v := range deps {
		sort.Strings(v)
	}
	return deps
}

// symbol is a declared name. scope is empty for names visible across the
// patch and "file#function" for names local to one function.
type symbol struct {
	lang, name, scope string
}

// importRef is an import on an added line: a Go import path, or Python
// module candidates (dotted, relative imports already resolved to a path
// from the repository root, marked by a leading "/").
type importRef struct {
	hunk    string
	lang    string
	modules []string
}

type defUse struct {
	decls   map[symbol]map[string]bool // symbol → declaring hunks
	uses    map[string]map[symbol]bool // hunk → symbols it uses
	imports []importRef
}

func (s *defUse) declare(sym symbol, hunk string) {
	if s.decls[sym] == nil {
		s.decls[sym] = map[string]bool{}
	}
	s.decls[sym][hunk] = true
}

func (s *defUse) use(hunk string, sym symbol) {
	if s.uses[hunk] == nil {
		s.uses[hunk] = map[symbol]bool{}
	}
	s.uses[hunk][sym] = true
}

// addedLines maps each added line's number in the new file to its hunk.
func addedLines(fd *FileDiff) map[int]string {
	lines := map[int]string{}
	for _, h := range fd.Hunks {
		for _, frag := range h.frags {
			n := int(frag.NewPosition)
			for _, l := range frag.Lines {
				switch l.Op {
				case gitdiff.OpAdd:
					lines[n] = h.ID
					n++
				case gitdiff.OpContext:
					n++
				}
			}
		}
	}
	return lines
}

func (s *defUse) scanGo(fd *FileDiff) {
	fset := token.NewFileSet()
	f, _ := parser.ParseFile(fset, "", fd.new, parser.SkipObjectResolution)
	if f == nil {
		return
	}
	added := addedLines(fd)
	hunkAt := func(n ast.Node) (string, bool) {
		h, ok := added[fset.Position(n.Pos()).Line]
		return h, ok
	}
	for _, imp := range f.Imports {
		if h, ok := hunkAt(imp); ok {
			if p, err := strconv.Unquote(imp.Path.Value); err == nil {
				s.imports = append(s.imports, importRef{hunk: h, lang: "go", modules: []string{p}})
			}
		}
	}
	for _, decl := range f.Decls {
		scope := ""
		if fn, ok := decl.(*ast.FuncDecl); ok {
			scope = fd.Path() + "#" + funcDeclName(fn)
		}
		declared := goDeclared(decl, scope)
		ast.Inspect(decl, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok || id.Name == "_" {
				return true
			}
			h, ok := hunkAt(id)
			if !ok {
				return true
			}
			if sc, isDecl := declared[id]; isDecl {
				s.declare(symbol{lang: "go", name: id.Name, scope: sc}, h)
			} else {
				s.use(h, symbol{lang: "go", name: id.Name, scope: scope})
			}
			return true
		})
	}
}

// goDeclared finds the identifiers that declare a name within one
// top-level declaration and the scope each belongs to: "" for names others
// reach (functions, methods, types, fields, package-level values), scope
// for a function's parameters and locals. Labels and the parameter names
// of function types outside functions are left out altogether by mapping
// them to a scope no use has.
func goDeclared(decl ast.Decl, scope string) map[*ast.Ident]string {
	const nowhere = "\x00"
	params := scope
	if scope == "" {
		params = nowhere
	}
	declared := map[*ast.Ident]string{}
	local := func(ids ...*ast.Ident) {
		for _, id := range ids {
			declared[id] = scope
		}
	}
	fields := func(l *ast.FieldList, sc string) {
		if l == nil {
			return
		}
		for _, f := range l.List {
			for _, id := range f.Names {
				declared[id] = sc
			}
		}
	}
	ast.Inspect(decl, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			declared[n.Name] = ""
			fields(n.Recv, scope)
		case *ast.FuncType:
			fields(n.TypeParams, params)
			fields(n.Params, params)
			fields(n.Results, params)
		case *ast.TypeSpec:
			local(n.Name)
			fields(n.TypeParams, params)
		case *ast.ValueSpec:
			local(n.Names...)
		case *ast.StructType:
			fields(n.Fields, "")
		case *ast.InterfaceType:
			fields(n.Methods, "")
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, e := range n.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						local(id)
					}
				}
			}
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				for _, e := range []ast.Expr{n.Key, n.Value} {
					if id, ok := e.(*ast.Ident); ok {
						local(id)
					}
				}
			}
		case *ast.LabeledStmt:
			declared[n.Label] = nowhere
		case *ast.BranchStmt:
			if n.Label != nil {
				declared[n.Label] = nowhere
			}
		}
		return true
	})
	return declared
}

var (
	pyIdent      = regexp.MustCompile(`[A-Za-z_]\w*`)
	pyAssign     = regexp.MustCompile(`^([A-Za-z_]\w*)\s*(?::[^=]*)?=[^=]`)
	pyImport     = regexp.MustCompile(`^\s*import\s+(.+)$`)
	pyFromImport = regexp.MustCompile(`^\s*from\s+(\S+)\s+import\s+\(?([^)#]*)`)
	pyStrings    = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
)

// pyKeywords are words that never name a declaration of the patch.
var pyKeywords = func() map[string]bool {
	set := map[string]bool{}
	for _, k := range strings.Fields(`False None True and as assert async await break class continue
		def del elif else except finally for from global if import in is lambda nonlocal not or pass
		raise return try while with yield self cls`) {
		set[k] = true
	}
	return set
}()

func (s *defUse) scanPython(fd *FileDiff) {
	for _, h := range fd.Hunks {
		for _, frag := range h.frags {
			for _, l := range frag.Lines {
				if l.Op == gitdiff.OpAdd {
					s.scanPythonLine(fd.Path(), h.ID, strings.TrimRight(l.Line, "\r\n"))
				}
			}
		}
	}
}

func (s *defUse) scanPythonLine(file, hunk, line string) {
	code, _, _ := strings.Cut(pyStrings.ReplaceAllString(line, `""`), "#")
	declared := ""
	if m := pythonDef.FindStringSubmatch(code); m != nil {
		declared = m[1]
	} else if m := pyAssign.FindStringSubmatch(code); m != nil {
		declared = m[1]
	}
	if declared != "" && !(strings.HasPrefix(declared, "__") && strings.HasSuffix(declared, "__")) {
		s.declare(symbol{lang: "py", name: declared}, hunk)
	}
	if mods := pythonImports(file, code); mods != nil {
		s.imports = append(s.imports, importRef{hunk: hunk, lang: "py", modules: mods})
	}
	for _, name := range pyIdent.FindAllString(code, -1) {
		if name != declared && !pyKeywords[name] {
			s.use(hunk, symbol{lang: "py", name: name})
		}
	}
}

// pythonImports lists the modules an import line may load: "import a.b"
// gives a.b; "from a import b, c" gives a, a.b and a.c (b may be a
// submodule); a relative "from .m import x" in pkg/f.py gives /pkg/m and
// /pkg/m/x, rooted at the repository.
func pythonImports(file, code string) []string {
	if m := pyImport.FindStringSubmatch(code); m != nil {
		var mods []string
		for _, part := range strings.Split(m[1], ",") {
			if f := strings.Fields(part); len(f) > 0 {
				mods = append(mods, f[0])
			}
		}
		return mods
	}
	m := pyFromImport.FindStringSubmatch(code)
	if m == nil {
		return nil
	}
	from := m[1]
	if strings.HasPrefix(from, ".") {
		rest := strings.TrimLeft(from, ".")
		dir := path.Dir(file)
		for i := 1; i < len(from)-len(rest); i++ {
			dir = path.Dir(dir)
		}
		from = "/" + strings.Trim(path.Join(dir, strings.ReplaceAll(rest, ".", "/")), "/")
	}
	sep := "."
	if strings.HasPrefix(from, "/") {
		sep = "/"
	}
	mods := []string{from}
	for _, part := range strings.Split(m[2], ",") {
		if f := strings.Fields(part); len(f) > 0 && f[0] != "*" {
			mods = append(mods, strings.TrimSuffix(from, sep)+sep+f[0])
		}
	}
	return mods
}

// provides reports whether the new file at newPath is what imp imports.
func provides(newPath string, imp importRef) bool {
	switch {
	case imp.lang == "go" && isGo(newPath):
		dir := path.Dir(newPath)
		if dir == "." {
			return false
		}
		return imp.modules[0] == dir || strings.HasSuffix(imp.modules[0], "/"+dir)
	case imp.lang == "py" && isPython(newPath):
		mod := strings.TrimSuffix(newPath, ".py")
		mod = strings.TrimSuffix(mod, "/__init__")
		dotted := strings.ReplaceAll(mod, "/", ".")
		for _, m := range imp.modules {
			if strings.HasPrefix(m, "/") {
				if m == "/"+mod {
					return true
				}
				continue
			}
			if m == dotted || strings.HasSuffix(dotted, "."+m) {
				return true
			}
		}
	}
	return false
}
