package testbed

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// person is a commit author.
type person struct {
	name, email string
}

func (p person) String() string { return p.name + " <" + p.email + ">" }

// importCommit is one commit of a fast-import stream.
type importCommit struct {
	ref     string
	mark    int
	from    int // 0 for a root commit
	merge   int // second parent of a merge, else 0
	author  person
	date    time.Time
	message string
	// files holds the paths to write, with content; deleted the paths to
	// remove.
	files   map[string]string
	deleted []string
	paths   []string // the order in which files are written
}

// fastImport writes commits as a git fast-import stream.
func fastImport(commits []importCommit) []byte {
	var b bytes.Buffer
	for _, c := range commits {
		fmt.Fprintf(&b, "commit %s\nmark :%d\n", c.ref, c.mark)
		stamp := fmt.Sprintf("%d +0000", c.date.Unix())
		fmt.Fprintf(&b, "author %s %s\ncommitter %s %s\n", c.author, stamp, c.author, stamp)
		fmt.Fprintf(&b, "data %d\n%s\n", len(c.message), c.message)
		if c.from != 0 {
			fmt.Fprintf(&b, "from :%d\n", c.from)
		}
		if c.merge != 0 {
			fmt.Fprintf(&b, "merge :%d\n", c.merge)
		}
		for _, p := range c.deleted {
			fmt.Fprintf(&b, "D %s\n", p)
		}
		for _, p := range c.paths {
			content := c.files[p]
			fmt.Fprintf(&b, "M 100644 inline %s\ndata %d\n%s\n", p, len(content), content)
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

// git runs git in dir with the user's and the system's configuration shut
// out, so that hooks, signing and templates cannot change what is written.
func git(ctx context.Context, dir string, stdin []byte, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"LC_ALL=C",
	)
}

// readMarks parses a fast-import marks file into mark → commit hash.
func readMarks(path string) (map[int]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read marks: %w", err)
	}
	marks := map[int]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		mark, hash, ok := strings.Cut(sc.Text(), " ")
		n, err := strconv.Atoi(strings.TrimPrefix(mark, ":"))
		if !ok || err != nil {
			return nil, fmt.Errorf("read marks: bad line %q", sc.Text())
		}
		marks[n] = hash
	}
	return marks, sc.Err()
}
