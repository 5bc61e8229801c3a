package gitops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/perfbot/perfbot/record"
)

// The descent into a dependency bump measures the culprit with the
// dependency at each version (or commit) between the two the culprit names.
// Each such tree is recorded as a commit of the clone, so that everything
// that measures commits (the Oracle, the slots, the bundles for remote
// hosts, the hunk search) measures them as they are. The commits of one
// descent form a chain whose first parent is the one before, so that the
// diff between two neighbours is the dependency's own change. A Python
// package's versions come from a directory of its wheels (WheelVersions)
// and each is a pin rewritten for the build step to install.

// DescentRefPrefix is where the commits SwapDependency makes are kept,
// under their own hash: a ref stops them from being collected, and
// fetching origin never prunes it.
const DescentRefPrefix = "refs/perfbot/descent/"

// DependencyRefPrefix is where FetchDependency keeps a dependency's
// branches and tags, under the dependency's name.
const DependencyRefPrefix = "refs/perfbot/deps/"

// GoModuleVersions returns the versions of module from old to new, both
// included, in semantic-version order, as the module proxies of goproxy
// (GOPROXY's syntax: a comma- or pipe-separated list; "direct" and "off"
// are skipped, file:// URLs are read from disk) list them. old and new
// are in the answer even when the list leaves them out (a retracted or
// unlisted version the culprit names); versions that are not canonical
// semantic versions are left out.
func GoModuleVersions(ctx context.Context, goproxy, module, old, new string) ([]string, error) {
	if !IsSemver(old) || !IsSemver(new) {
		return nil, fmt.Errorf("versions of %s: %q..%q are not semantic versions", module, old, new)
	}
	esc, err := escapeModulePath(module)
	if err != nil {
		return nil, fmt.Errorf("versions of %s: %w", module, err)
	}
	var errs []error
	for _, proxy := range strings.FieldsFunc(goproxy, func(r rune) bool { return r == ',' || r == '|' }) {
		if proxy == "direct" || proxy == "off" || proxy == "" {
			continue
		}
		list, err := readProxyList(ctx, strings.TrimSuffix(proxy, "/")+"/"+esc+"/@v/list")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		lo, hi := old, new
		if CompareSemver(lo, hi) > 0 {
			lo, hi = hi, lo
		}
		versions := []string{old, new}
		for _, v := range strings.Fields(list) {
			if IsSemver(v) && CompareSemver(v, lo) > 0 && CompareSemver(v, hi) < 0 {
				versions = append(versions, v)
			}
		}
		slices.SortFunc(versions, CompareSemver)
		versions = slices.Compact(versions)
		if CompareSemver(old, new) > 0 {
			slices.Reverse(versions)
		}
		return versions, nil
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("versions of %s: GOPROXY %q names no module proxy to list them", module, goproxy)
	}
	return nil, fmt.Errorf("versions of %s: %w", module, errors.Join(errs...))
}

// readProxyList reads a proxy's @v/list at u, from disk for a file:// URL.
func readProxyList(ctx context.Context, u string) (string, error) {
	parsed, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", u, err)
	}
	if parsed.Scheme == "file" {
		b, err := os.ReadFile(filepath.FromSlash(parsed.Path))
		if err != nil {
			return "", fmt.Errorf("read %s: %w", u, err)
		}
		return string(b), nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", u, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("read %s: %s", u, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", u, err)
	}
	return string(b), nil
}

// escapeModulePath is the module path as proxies spell it: each upper-case
// letter is "!" and its lower case.
func escapeModulePath(module string) (string, error) {
	if module == "" || strings.Contains(module, "..") || strings.ContainsAny(module, "!\\ \t\n") {
		return "", fmt.Errorf("%q is not a module path", module)
	}
	var b strings.Builder
	for _, r := range module {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String(), nil
}

// GoPseudoVersion is the pseudo-version the go command gives commit when
// the newest tag below it is base ("v1.2.3" gives v1.2.4-0.<UTC
// time>-<12 hex digits>, "v1.2.3-pre" gives v1.2.3-pre.0.<time>-<hash>).
func GoPseudoVersion(base string, commit record.Commit) string {
	stamp := commit.Date.UTC().Format("20060102150405") + "-" + commit.Hash[:min(12, len(commit.Hash))]
	v, ok := parseSemver(base)
	switch {
	case !ok:
		return "v0.0.0-" + stamp
	case v.pre != "":
		return fmt.Sprintf("v%s.%s.%s-%s.0.%s", v.major, v.minor, v.patch, v.pre, stamp)
	}
	return fmt.Sprintf("v%s.%s.%s-0.%s", v.major, v.minor, incDecimal(v.patch), stamp)
}

// FetchDependency fetches the branches and tags of a dependency's
// repository (a URL or a local path) into the clone, under
// DependencyRefPrefix+name, so that its commits and trees can be swapped
// into the watched tree.
func (r *Repo) FetchDependency(ctx context.Context, name, repo string) error {
	ref := dependencyRefName(name)
	if _, err := gitCmd(ctx, r.dir, nil, nil, "fetch", "--quiet", "--no-tags", "--force", "--", repo,
		"+refs/heads/*:"+DependencyRefPrefix+ref+"/heads/*", "+refs/tags/*:"+DependencyRefPrefix+ref+"/tags/*"); err != nil {
		return fmt.Errorf("fetch dependency %s from %s: %w", name, repo, err)
	}
	if err := r.reopen(); err != nil {
		return fmt.Errorf("fetch dependency %s: %w", name, err)
	}
	return nil
}

// DependencyTag is the commit a tag of a dependency that FetchDependency
// fetched names.
func (r *Repo) DependencyTag(ctx context.Context, name, tag string) (record.Commit, error) {
	c, err := r.Resolve(ctx, DependencyRefPrefix+dependencyRefName(name)+"/tags/"+tag)
	if err != nil {
		return record.Commit{}, fmt.Errorf("tag %s of dependency %s: %w", tag, name, err)
	}
	return c, nil
}

var refUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// dependencyRefName is name made safe for one part of a ref.
func dependencyRefName(name string) string {
	s := strings.Trim(refUnsafe.ReplaceAllString(name, "_"), "._-")
	if s == "" {
		return "dep"
	}
	return s
}

// SubmoduleURL is the URL that .gitmodules of commit gives the submodule
// at path; a relative URL ("../engine-kernels") is resolved against the
// watched repository's origin, as git does.
func (r *Repo) SubmoduleURL(ctx context.Context, commit, subPath string) (string, error) {
	out, err := gitCmd(ctx, r.dir, nil, nil, "config", "--blob", commit+":.gitmodules", "--get-regexp", `^submodule\..*\.path$`)
	if err != nil {
		return "", fmt.Errorf("submodule %s of %s: read .gitmodules: %w", subPath, record.ShortHash(commit), err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		key, p, _ := strings.Cut(line, " ")
		if p != subPath {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(key, "submodule."), ".path")
		u, err := gitFirstLine(ctx, r.dir, nil, nil, "config", "--blob", commit+":.gitmodules", "submodule."+name+".url")
		if err != nil {
			return "", fmt.Errorf("submodule %s of %s: no url: %w", subPath, record.ShortHash(commit), err)
		}
		if strings.HasPrefix(u, "./") || strings.HasPrefix(u, "../") {
			base := strings.TrimSuffix(r.origin, "/")
			if IsLocalPath(base) {
				return filepath.Join(base, u), nil
			}
			return strings.TrimSuffix(base, "/") + "/" + u, nil
		}
		return u, nil
	}
	return "", fmt.Errorf("submodule %s of %s: not in .gitmodules", subPath, record.ShortHash(commit))
}

// DependencySwap is what SwapDependency changes in a tree.
type DependencySwap struct {
	// GoMod is the go.mod file to edit; Module the module it requires.
	GoMod, Module string
	// Version, when set, is required instead (go mod edit -require), and
	// go.sum gets its sums (go mod download, through GOPROXY).
	Version string
	// Path and Tree, when set, put the dependency's tree (a commit or
	// tree of the clone, see FetchDependency) at Path, in place of what
	// was there (a submodule, or the vendored copy). With Module set,
	// go.mod gets a replace directive that points the module at Path.
	Path, Tree string
	// Pins and Package, when set, rewrite the pin of the Python package
	// Package (any spelling PEP 503 deems the same) in Pins, a
	// requirements*.txt or pyproject.toml file, to exactly Version: the
	// same pin syntax ("pkg==Version" in a requirement string, pkg =
	// "Version" in a Poetry table), so that the build step, which
	// installs from the pins, installs that version.
	Pins, Package string
}

// SwapDependency records the tree of base with s applied as a commit whose
// parent is parent, kept under DescentRefPrefix, and returns its hash.
// The commit's author, committer and date are fixed (perfbot's, at
// base's date), so the same swap on the same base and parent is always
// the same commit and its measurements are found again.
func (r *Repo) SwapDependency(ctx context.Context, base, parent record.Commit, s DependencySwap, message string) (string, error) {
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("swap %s into %s: %w", s.describe(), base.Short(), err)
	}
	tmp, err := r.scratchIndex()
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if _, err := gitCmd(ctx, r.dir, nil, env, "read-tree", base.Hash); err != nil {
		return fail(err)
	}
	if s.Tree != "" {
		if err := r.swapTree(ctx, env, base.Hash, s.Path, s.Tree); err != nil {
			return fail(err)
		}
	}
	if s.Module != "" {
		if err := r.editGoMod(ctx, env, tmp, base.Hash, s); err != nil {
			return fail(err)
		}
	}
	if s.Pins != "" {
		if err := r.editPin(ctx, env, base.Hash, s); err != nil {
			return fail(err)
		}
	}
	tree, err := gitFirstLine(ctx, r.dir, nil, env, "write-tree")
	if err != nil {
		return fail(err)
	}
	dated := parent
	dated.Date = base.Date
	commit, err := r.commitTree(ctx, tree, dated, message)
	if err != nil {
		return fail(err)
	}
	if _, err := gitCmd(ctx, r.dir, nil, nil, "update-ref", DescentRefPrefix+commit, commit); err != nil {
		return fail(err)
	}
	if err := r.reopen(); err != nil {
		return fail(err)
	}
	return commit, nil
}

func (s DependencySwap) describe() string {
	switch {
	case s.Package != "":
		return s.Package + "==" + s.Version
	case s.Version != "":
		return s.Module + "@" + s.Version
	case s.Module != "":
		return s.Module + " at " + record.ShortHash(s.Tree)
	}
	return s.Path + " at " + record.ShortHash(s.Tree)
}

// swapTree replaces what the index holds at dir (a gitlink or a
// directory) by tree.
func (r *Repo) swapTree(ctx context.Context, env []string, base, dir, tree string) error {
	dir = path.Clean(strings.Trim(dir, "/"))
	if dir == "." || dir == "" || strings.HasPrefix(dir, "../") {
		return fmt.Errorf("path %q is not a directory inside the tree", dir)
	}
	old, err := gitCmd(ctx, r.dir, nil, nil, "ls-tree", "-r", "-z", "--name-only", base, "--", dir)
	if err != nil {
		return err
	}
	if len(old) > 0 {
		// Mode 0 removes a path (update-index --force-remove wants a
		// work tree, which the clone has not).
		var info strings.Builder
		for _, p := range splitZ(old) {
			info.WriteString("0 " + strings.Repeat("0", 40) + "\t" + p + "\x00")
		}
		if _, err := gitCmd(ctx, r.dir, []byte(info.String()), env, "update-index", "-z", "--index-info"); err != nil {
			return fmt.Errorf("remove %s: %w", dir, err)
		}
	}
	// read-tree --prefix wants a work tree, though without -u it
	// writes none: an empty scratch directory stands in for it.
	wt, err := os.MkdirTemp(filepath.Dir(strings.TrimPrefix(env[0], "GIT_INDEX_FILE=")), "tree-")
	if err != nil {
		return err
	}
	env = append(slices.Clone(env), "GIT_WORK_TREE="+wt)
	if _, err := gitCmd(ctx, r.dir, nil, env, "read-tree", "--prefix="+dir+"/", tree+"^{tree}"); err != nil {
		return fmt.Errorf("put %s at %s: %w", record.ShortHash(tree), dir, err)
	}
	return nil
}

// editGoMod edits the go.mod (and go.sum) of base as s says, with the go
// command in a scratch directory that holds only those two files, and puts
// them in the index.
func (r *Repo) editGoMod(ctx context.Context, env []string, tmp, base string, s DependencySwap) error {
	modDir := filepath.Join(tmp, "mod")
	if err := os.MkdirAll(modDir, 0o755); err != nil {
		return err
	}
	sumPath := path.Join(path.Dir(s.GoMod), "go.sum")
	for _, f := range []string{s.GoMod, sumPath} {
		b, err := gitCmd(ctx, r.dir, nil, nil, "cat-file", "blob", base+":"+f)
		if err != nil && f == s.GoMod {
			return fmt.Errorf("read %s: %w", f, err)
		}
		if err := os.WriteFile(filepath.Join(modDir, path.Base(f)), b, 0o644); err != nil {
			return err
		}
	}
	var steps [][]string
	if s.Version != "" {
		steps = [][]string{{"mod", "edit", "-require=" + s.Module + "@" + s.Version}, {"mod", "download", s.Module}}
	} else {
		rel, err := filepath.Rel(path.Dir(s.GoMod), s.Path)
		if err != nil {
			return err
		}
		steps = [][]string{{"mod", "edit", "-replace=" + s.Module + "=./" + filepath.ToSlash(rel)}}
	}
	for _, args := range steps {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = modDir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	for _, f := range []string{s.GoMod, sumPath} {
		b, err := os.ReadFile(filepath.Join(modDir, path.Base(f)))
		if err != nil {
			return err
		}
		if len(b) == 0 {
			continue
		}
		blob, err := gitFirstLine(ctx, r.dir, b, nil, "hash-object", "-w", "--stdin")
		if err != nil {
			return err
		}
		if _, err := gitCmd(ctx, r.dir, nil, env, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+f); err != nil {
			return fmt.Errorf("stage %s: %w", f, err)
		}
	}
	return nil
}

var (
	// pinRewrite is pyPin with its parts kept apart: what comes before
	// the operator, the operator and what comes after, and the version.
	pinRewrite = regexp.MustCompile(`^(\s*["']?([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*)(?:===|==|~=|>=)(\s*)[0-9][^\s"',;]*`)
	// poetryRewrite is poetryPin with its parts kept apart.
	poetryRewrite = regexp.MustCompile(`^(\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*=\s*["'])[\^~=<>]*[0-9][^"']*`)
)

// editPin rewrites the pins of s.Package in s.Pins of base to s.Version
// and puts the file in the index.
func (r *Repo) editPin(ctx context.Context, env []string, base string, s DependencySwap) error {
	ls, err := gitFirstLine(ctx, r.dir, nil, nil, "ls-tree", base, "--", s.Pins)
	mode, _, _ := strings.Cut(ls, " ")
	if err != nil || mode == "" {
		return fmt.Errorf("read %s: not in the tree", s.Pins)
	}
	b, err := gitCmd(ctx, r.dir, nil, nil, "cat-file", "blob", base+":"+s.Pins)
	if err != nil {
		return fmt.Errorf("read %s: %w", s.Pins, err)
	}
	res := []*regexp.Regexp{pinRewrite}
	if path.Base(s.Pins) == "pyproject.toml" {
		res = append(res, poetryRewrite)
	}
	want := PythonPackageName(s.Package)
	lines := strings.SplitAfter(string(b), "\n")
	pinned := 0
	for i, line := range lines {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "#") {
			continue
		}
		for j, re := range res {
			m := re.FindStringSubmatchIndex(line)
			if m == nil || PythonPackageName(line[m[4]:m[5]]) != want {
				continue
			}
			pin := line[:m[3]] + s.Version
			if j == 0 {
				pin = line[:m[3]] + "==" + line[m[6]:m[7]] + s.Version
			}
			lines[i] = pin + line[m[1]:]
			pinned++
			break
		}
	}
	if pinned == 0 {
		return fmt.Errorf("%s pins no version of %s", s.Pins, s.Package)
	}
	blob, err := gitFirstLine(ctx, r.dir, []byte(strings.Join(lines, "")), nil, "hash-object", "-w", "--stdin")
	if err != nil {
		return err
	}
	if _, err := gitCmd(ctx, r.dir, nil, env, "update-index", "--cacheinfo", mode+","+blob+","+s.Pins); err != nil {
		return fmt.Errorf("stage %s: %w", s.Pins, err)
	}
	return nil
}
