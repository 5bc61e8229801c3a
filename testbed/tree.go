package testbed

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// tree is the content of a repository at one commit: path to file content.
type tree map[string]string

func (t tree) clone() tree { return maps.Clone(t) }

// paths returns the paths of t in order.
func (t tree) paths() []string { return slices.Sorted(maps.Keys(t)) }

// changed returns the paths whose content differs between t and next,
// including paths added or removed, in order.
func (t tree) changed(next tree) []string {
	var out []string
	for p, c := range next {
		if old, ok := t[p]; !ok || old != c {
			out = append(out, p)
		}
	}
	for p := range t {
		if _, ok := next[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// edit is one scripted change of a file.
type edit struct {
	path string
	// old is the text replaced, which must occur exactly once; empty to
	// write the whole file (creating it if needed).
	old string
	new string
	// appendText is added at the end of the file.
	appendText string
	// remove deletes the file.
	remove bool
}

// replace returns an edit that replaces the only occurrence of old in path.
func replace(path, old, new string) edit { return edit{path: path, old: old, new: new} }

// insertAfter returns an edit that inserts text after the only occurrence
// of anchor in path.
func insertAfter(path, anchor, text string) edit {
	return edit{path: path, old: anchor, new: anchor + text}
}

// appendTo returns an edit that adds text at the end of path.
func appendTo(path, text string) edit { return edit{path: path, appendText: text} }

// write returns an edit that sets the whole content of path.
func write(path, content string) edit { return edit{path: path, new: content} }

// span is the region of a file that an edit rewrote, in lines of the new
// content, 1-based.
type span struct {
	path        string
	start, size int
}

// apply performs e on t and returns the lines it rewrote.
func (e edit) apply(t tree) (span, error) {
	cur, ok := t[e.path]
	switch {
	case e.remove:
		if !ok {
			return span{}, fmt.Errorf("remove %s: no such file", e.path)
		}
		delete(t, e.path)
		return span{path: e.path}, nil
	case e.appendText != "":
		if !ok {
			return span{}, fmt.Errorf("append to %s: no such file", e.path)
		}
		t[e.path] = cur + e.appendText
		return span{path: e.path, start: strings.Count(cur, "\n") + 1, size: strings.Count(e.appendText, "\n")}, nil
	case e.old == "":
		t[e.path] = e.new
		return span{path: e.path, start: 1, size: strings.Count(e.new, "\n")}, nil
	case !ok:
		return span{}, fmt.Errorf("edit %s: no such file", e.path)
	}
	switch n := strings.Count(cur, e.old); n {
	case 1:
	case 0:
		return span{}, fmt.Errorf("edit %s: text not found: %q", e.path, firstLine(e.old))
	default:
		return span{}, fmt.Errorf("edit %s: text found %d times: %q", e.path, n, firstLine(e.old))
	}
	at := strings.Index(cur, e.old)
	t[e.path] = cur[:at] + e.new + cur[at+len(e.old):]
	return rewritten(e.path, strings.Count(cur[:at], "\n")+1, e.old, e.new), nil
}

// rewritten returns the lines of new that differ from old once the lines
// both start and end with are set aside; line is where both begin.
func rewritten(path string, line int, old, new string) span {
	a, b := strings.Split(old, "\n"), strings.Split(new, "\n")
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	return span{path: path, start: line + pre, size: len(b) - pre - suf}
}

func firstLine(s string) string {
	s = strings.TrimLeft(s, "\n")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
