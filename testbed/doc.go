// Package testbed is perfbot's bundled target: a small inference engine
// written in Go (the packages under engine/, tested with the rest of this
// module) and a generator that turns it into a git repository whose history
// holds known performance changes.
//
// Generate writes the repository: the engine's sources, with their import
// paths rewritten to the module example.com/infer, are the first commit, and
// about 124 scripted commits by six authors over simulated dates follow on
// the first-parent chain of main. Among ordinary refactors, tests and
// documentation the script places the ground truth:
//
//	a  a commit touching seven files whose one harmful hunk changes the
//	   allreduce fallback chain (verify tok/s about -15%)
//	b  an attention change that slows only the extend (verify) path
//	c  a small speculative-decoding regression (3-5%)
//	d  an improvement of the matrix kernel (well above +6%)
//	e  a commit that does not build, followed by its fix
//	f  a merge of a side branch (--no-ff; the first parent stays on main)
//	g  a commit touching only documentation and tests
//
// The effects come from the code: more work, or the same work done a
// slower way, never from sleeping. The manifest, which says where each
// change is and what it should do to each metric, is written next to the
// repository, never inside it (see ManifestPath).
//
// A seed fixes everything: the same seed gives the same commit hashes. The
// seed chooses the order of the ordinary commits, their authors and dates,
// and moves each ground-truth change by up to three commits.
//
// Verify measures every change against its parent and prints the measured
// effect, with its confidence interval, beside the intended one.
//
// GenerateGPU writes the second testbed with the same machinery: a PyTorch
// transformer (gpuengine/) with CUDA graphs and an EAGLE-style verify step,
// measured by configs/gpu-testbed.yaml, whose history of about 45 commits
// holds its own ground truth (see gpu.go). Its manifest says Testbed "gpu".
package testbed
