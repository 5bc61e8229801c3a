package testbed

import (
	"embed"
	"fmt"
	"regexp"
	"strings"
)

// fillerThreads returns the Go engine's ordinary commits: threads whose
// commits must keep their order, interleaved by the seed. None of them
// changes what the benchmarks compute or how fast.
func fillerThreads() [][]step {
	return append([][]step{changelogThread(6)}, fillers("go")...)
}

// gpuFillerThreads returns the GPU testbed's ordinary commits, as
// fillerThreads does the Go engine's.
func gpuFillerThreads() [][]step {
	return append([][]step{changelogThread(4)}, fillers("gpu")...)
}

// changelogThread is a changelog started and then updated, n commits in
// all.
func changelogThread(n int) []step {
	t := []step{changelog(true)}
	for range n - 1 {
		t = append(t, changelog(false))
	}
	return t
}

// fillerFiles hold the ordinary commits of each testbed as text: what
// they change is data, not code.
//
// A file is a list of commits, each a marker line and its edits; lines
// before the first marker are comments. "-- commit: SUBJECT --" starts a
// thread of its own, "-- then: SUBJECT --" continues the thread of the
// commit before it (threads keep their order; the seed interleaves them).
// The edits of a commit, each a marker line and a block of the lines up to
// the next marker:
//
//	-- write PATH --         the block is the whole new content of PATH
//	-- append PATH --        the block is added at the end of PATH
//	-- replace PATH --       the block, which occurs once in PATH, is
//	-- with --               replaced with this block
//	-- insert PATH --        this block is inserted after the block above,
//	-- after it --           which occurs once in PATH (read bottom up)
//
// A block ends with a newline unless its last line is followed by
// "\ No newline at end of file", as in a diff.
//
//go:embed fillers/*.txt
var fillerFiles embed.FS

// noNewline follows a block's last line when the block does not end with
// a newline.
const noNewline = `\ No newline at end of file`

var fillerMarker = regexp.MustCompile(`^-- (.*) --$`)

// fillers reads the ordinary commits of fillers/name.txt as threads.
func fillers(name string) [][]step {
	data, err := fillerFiles.ReadFile("fillers/" + name + ".txt")
	if err != nil {
		panic(err) // embedded: a missing file is a build mistake
	}
	threads, err := parseFillers(string(data))
	if err != nil {
		panic(fmt.Sprintf("fillers/%s.txt: %v", name, err))
	}
	return threads
}

// parseFillers reads the file format described at fillerFiles.
func parseFillers(text string) ([][]step, error) {
	type section struct {
		marker string
		block  string
		line   int
	}
	var sections []section
	var cur *section
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if m := fillerMarker.FindStringSubmatch(strings.TrimSuffix(l, "\n")); m != nil {
			sections = append(sections, section{marker: m[1], line: i + 1})
			cur = &sections[len(sections)-1]
			continue
		}
		switch {
		case cur == nil:
			// a comment before the first commit
		case strings.TrimSuffix(l, "\n") == noNewline:
			cur.block = strings.TrimSuffix(cur.block, "\n")
		default:
			cur.block += l
		}
	}
	var threads [][]step
	for i := 0; i < len(sections); i++ {
		s := sections[i]
		verb, arg, _ := strings.Cut(s.marker, " ")
		switch verb {
		case "commit:", "then:":
			if strings.TrimSpace(s.block) != "" {
				return nil, fmt.Errorf("line %d: text after a commit's subject", s.line)
			}
			st := step{subject: arg, author: anyone}
			if verb == "commit:" || len(threads) == 0 {
				threads = append(threads, nil)
			}
			threads[len(threads)-1] = append(threads[len(threads)-1], st)
			continue
		}
		if len(threads) == 0 {
			return nil, fmt.Errorf("line %d: an edit before the first commit", s.line)
		}
		t := threads[len(threads)-1]
		st := &t[len(t)-1]
		switch verb {
		case "write":
			st.edits = append(st.edits, write(arg, s.block))
		case "append":
			st.edits = append(st.edits, appendTo(arg, s.block))
		case "replace", "insert":
			want := map[string]string{"replace": "with", "insert": "after it"}[verb]
			if i+1 >= len(sections) || sections[i+1].marker != want {
				return nil, fmt.Errorf("line %d: %s without its %q block", s.line, verb, want)
			}
			second := sections[i+1].block
			i++
			if verb == "replace" {
				st.edits = append(st.edits, replace(arg, s.block, second))
			} else {
				st.edits = append(st.edits, insertAfter(arg, s.block, second))
			}
		default:
			return nil, fmt.Errorf("line %d: unknown marker %q", s.line, s.marker)
		}
	}
	return threads, nil
}
