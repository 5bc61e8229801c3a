package testbed

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
)

// The GPU testbed is the second target the generator writes: a small
// decoder-only transformer in PyTorch (the files under gpuengine/), laid
// out like an inference engine, with a history of known changes whose
// effects show on a GPU. GenerateGPU writes it with the same machinery as
// Generate; only the script differs.
//
//	a  a commit touching five files whose one harmful hunk keeps the verify
//	   (extend) step out of its CUDA graph (verify about 2.5x slower)
//	b  a hunk that sends extend attention to SDPA's math backend
//	c  a small verify-path regression (3-6%): every layer copies an
//	   extend batch's q, k and v out of the projection's output
//	d  an improvement: queries and keys rotated in one call
//	e  a commit that fails the import check, followed by its fix
//
// The intended effects are those expected on one H200 with CUDA graphs on
// (where the benchmark is launch-bound), not on a CPU: b changes nothing on
// a CPU, where SDPA picks its kernel alone.

// gpuFiles holds the GPU testbed's sources. The patterns name files rather
// than directories so that __init__.py is included and caches are not.
//
//go:embed gpuengine/.gitignore gpuengine/*.md gpuengine/*/*.py gpuengine/*/*.md
var gpuFiles embed.FS

// GPUComponents are the GPU testbed's components, as configs/gpu-testbed.yaml
// names them: each is a top-level directory.
var GPUComponents = []string{"attention", "communicator", "model", "runtime", "speculative"}

// GenerateGPU creates the GPU testbed's repository in dir, which must not
// exist or be empty, and writes its manifest to ManifestPath(dir). It
// needs the git command; running the repository needs python3 with torch.
func GenerateGPU(ctx context.Context, dir string, seed int64) (*Manifest, error) {
	return generate(ctx, dir, seed, gpuScript())
}

func gpuScript() script {
	return script{
		testbed: "gpu", root: gpuRootStep, anchors: gpuGroundTruth, fillers: gpuFillerThreads,
		component: gpuComponentOf, function: enclosingPyFunc,
	}
}

// gpuTree returns the GPU testbed's files as its first commit holds them.
func gpuTree() (tree, error) {
	t := tree{}
	err := fs.WalkDir(gpuFiles, "gpuengine", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := gpuFiles.ReadFile(p)
		if err != nil {
			return err
		}
		t[strings.TrimPrefix(p, "gpuengine/")] = string(data)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read embedded GPU testbed: %w", err)
	}
	return t, nil
}

// gpuComponentOf names the component of a path of the GPU testbed, "" for
// paths outside every component.
func gpuComponentOf(p string) string {
	first, _, ok := strings.Cut(p, "/")
	for _, c := range GPUComponents {
		if ok && first == c {
			return c
		}
	}
	return ""
}

var pyDef = regexp.MustCompile(`^(\s*)(?:async\s+)?(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]*)`)

// enclosingPyFunc returns the dotted name ("Class.method", "function") of
// the innermost def or class of a Python file around the first non-blank
// line of start..start+size-1, judged by indentation; "" at module level or
// when the file is not Python.
func enclosingPyFunc(file, src string, start, size int) string {
	if path.Ext(file) != ".py" {
		return ""
	}
	lines := strings.Split(src, "\n")
	end := min(start+max(size, 1)-1, len(lines))
	for start < end && strings.TrimSpace(lines[start-1]) == "" {
		start++
	}
	type scope struct {
		indent int
		name   string
	}
	var stack []scope
	for i := 0; i < start && i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " \t"))
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		if m := pyDef.FindStringSubmatch(l); m != nil {
			stack = append(stack, scope{indent, m[2]})
		}
	}
	names := make([]string, len(stack))
	for i, s := range stack {
		names[i] = s.name
	}
	return strings.Join(names, ".")
}
