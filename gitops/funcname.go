package gitops

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// functionName names what encloses the first changed line of frag: the Go
// function (with receiver) or type declaration, the Python def/class path,
// or, for other files and Go sources that do not parse, the section git
// printed in the hunk header.
func functionName(fd *FileDiff, frag *gitdiff.TextFragment) string {
	newSide, line := firstChange(frag)
	src := fd.old
	if newSide {
		src = fd.new
	}
	header := strings.TrimSpace(frag.Comment)
	switch {
	case line == 0 || src == nil:
		return header
	case isGo(fd.Path()):
		name, parsed := goDecl(src, line)
		if !parsed && name == "" {
			return header
		}
		return name
	case isPython(fd.Path()):
		return pythonScope(src, line)
	}
	return header
}

// firstChange locates the first changed line that says something: the
// first non-blank added line in the new file if the fragment adds any,
// else the first non-blank deleted line in the old file. Blank lines are a
// last resort because a blank line between two functions belongs to
// neither.
func firstChange(frag *gitdiff.TextFragment) (newSide bool, line int) {
	oldLine, newLine := int(frag.OldPosition), int(frag.NewPosition)
	var add, addBlank, del, delBlank int
	for _, l := range frag.Lines {
		blank := strings.TrimSpace(l.Line) == ""
		switch l.Op {
		case gitdiff.OpAdd:
			add, addBlank = pick(add, addBlank, newLine, blank)
			newLine++
		case gitdiff.OpDelete:
			del, delBlank = pick(del, delBlank, oldLine, blank)
			oldLine++
		default:
			oldLine++
			newLine++
		}
	}
	switch {
	case add > 0:
		return true, add
	case addBlank > 0:
		return true, addBlank
	case del > 0:
		return false, del
	}
	return false, delBlank
}

func pick(first, firstBlank, line int, blank bool) (int, int) {
	if blank && firstBlank == 0 {
		firstBlank = line
	}
	if !blank && first == 0 {
		first = line
	}
	return first, firstBlank
}

// goDecl returns the function or type declaration of src that contains
// line (doc comment included), and whether src parsed without error.
func goDecl(src []byte, line int) (name string, parsed bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if f == nil {
		return "", false
	}
	within := func(doc *ast.CommentGroup, n ast.Node) bool {
		start := n.Pos()
		if doc != nil {
			start = doc.Pos()
		}
		return fset.Position(start).Line <= line && line <= fset.Position(n.End()).Line
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if within(d.Doc, d) {
				return funcDeclName(d), err == nil
			}
		case *ast.GenDecl:
			if d.Tok != token.TYPE || !within(d.Doc, d) {
				continue
			}
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok && (within(ts.Doc, ts) || len(d.Specs) == 1) {
					return ts.Name.Name, err == nil
				}
			}
		}
	}
	return "", err == nil
}

// funcDeclName writes a function as Go's runtime does, without the
// package: "Select", "Ring.Size", "(*Ring).AllReduce".
func funcDeclName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	typ := d.Recv.List[0].Type
	star := false
	if s, ok := typ.(*ast.StarExpr); ok {
		star, typ = true, s.X
	}
	switch t := typ.(type) {
	case *ast.IndexExpr:
		typ = t.X
	case *ast.IndexListExpr:
		typ = t.X
	}
	recv := "?"
	if id, ok := typ.(*ast.Ident); ok {
		recv = id.Name
	}
	if star {
		return "(*" + recv + ")." + d.Name.Name
	}
	return recv + "." + d.Name.Name
}

var pythonDef = regexp.MustCompile(`^\s*(?:async\s+def|def|class)\s+([A-Za-z_]\w*)`)

// pythonScope returns the dotted path of the defs and classes enclosing
// line ("Communicator.all_reduce"): walking up, each def or class
// indented less than everything seen so far encloses it. A line that is
// itself a def, class or decorator names that definition. Comments, lines
// inside triple-quoted strings and lines opening with a closing bracket
// (the end of a wrapped signature) say nothing about depth and are
// skipped.
func pythonScope(src []byte, line int) string {
	lines := strings.Split(string(src), "\n")
	inString := tripleQuoted(lines)
	i := line - 1
	if i < 0 || i >= len(lines) {
		return ""
	}
	if strings.HasPrefix(strings.TrimSpace(lines[i]), "@") {
		for j := i; j < len(lines); j++ {
			if pythonDef.MatchString(lines[j]) {
				i = j
				break
			}
		}
	}
	var names []string
	limit := indentOf(lines[i])
	if m := pythonDef.FindStringSubmatch(lines[i]); m != nil {
		names = append(names, m[1])
	}
	for j := i - 1; j >= 0 && limit > 0; j-- {
		text := strings.TrimSpace(lines[j])
		if text == "" || inString[j] || strings.HasPrefix(text, "#") || strings.ContainsAny(text[:1], ")]}") {
			continue
		}
		ind := indentOf(lines[j])
		if ind >= limit {
			continue
		}
		limit = ind
		if m := pythonDef.FindStringSubmatch(lines[j]); m != nil {
			names = append(names, m[1])
		}
	}
	for a, b := 0, len(names)-1; a < b; a, b = a+1, b-1 {
		names[a], names[b] = names[b], names[a]
	}
	return strings.Join(names, ".")
}

// tripleQuoted marks the lines that begin inside a triple-quoted string.
// It does not parse Python: quotes inside comments or ordinary strings can
// fool it, at the price of a shorter name.
func tripleQuoted(lines []string) []bool {
	inside := make([]bool, len(lines))
	open := ""
	for i, l := range lines {
		inside[i] = open != ""
		for rest := l; ; {
			if open != "" {
				j := strings.Index(rest, open)
				if j < 0 {
					break
				}
				open, rest = "", rest[j+3:]
				continue
			}
			j, q := strings.Index(rest, `"""`), `"""`
			if k := strings.Index(rest, "'''"); k >= 0 && (j < 0 || k < j) {
				j, q = k, "'''"
			}
			if j < 0 {
				break
			}
			open, rest = q, rest[j+3:]
		}
	}
	return inside
}

// indentOf counts leading whitespace columns, a tab reaching the next
// multiple of 8 as Python's tokenizer does.
func indentOf(s string) int {
	n := 0
	for _, c := range s {
		switch c {
		case ' ':
			n++
		case '\t':
			n = n/8*8 + 8
		default:
			return n
		}
	}
	return n
}
