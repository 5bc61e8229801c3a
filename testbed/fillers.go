package testbed

// fillerThreads returns the ordinary commits of the history: threads whose
// commits must keep their order, interleaved by the seed. None of them
// changes what the benchmarks compute or how fast.
func fillerThreads() [][]step {
	threads := [][]step{changelogThread(), glossaryThread()}
	for _, group := range [][]step{docSteps(), testSteps(), noteSteps(), refactorSteps()} {
		for _, s := range group {
			threads = append(threads, []step{s})
		}
	}
	return threads
}

func changelogThread() []step {
	t := []step{changelog(true)}
	for range 5 {
		t = append(t, changelog(false))
	}
	return t
}

func glossaryThread() []step {
	terms := []struct{ term, text string }{
		{"allreduce", "Every rank contributes a buffer and receives the element-wise sum of all of them."},
		{"bus bandwidth", "The algorithm bandwidth times 2(R-1)/R, the share of the data each rank must move in an allreduce; nccl-tests report it, and so does BenchmarkAllReduce."},
		{"custom allreduce", "An allreduce over buffers that the ranks share, as SGLang and vLLM run over NVLink; here the ring backend."},
		{"decode", "One new token through the model, attending over the cache."},
		{"extend", "Several new tokens through the model at once: a prefill, or a verify step."},
		{"draft head", "The small model that proposes tokens for the target to verify."},
		{"acceptance length", "Tokens emitted per verify step: accepted proposals plus the bonus token."},
		{"row-parallel", "A layer whose weight is split by input columns, so each rank produces a partial sum that needs an allreduce."},
		{"column-parallel", "A layer whose weight is split by output rows, so each rank produces a slice of the output."},
	}
	t := []step{{
		subject: "docs: add a glossary",
		author:  anyone,
		edits:   []edit{write("docs/glossary.md", "# Glossary\n\nTerms as this repository uses them.\n")},
	}}
	for _, g := range terms {
		t = append(t, step{
			subject: "docs(glossary): " + g.term,
			author:  anyone,
			edits:   []edit{appendTo("docs/glossary.md", "\n**"+g.term+"**: "+g.text+"\n")},
		})
	}
	return t
}

func docSteps() []step {
	doc := func(subject string, e edit) step { return step{subject: subject, author: anyone, edits: []edit{e}} }
	return []step{
		doc("docs: describe the MoE block", write("docs/moe.md", `# Mixture of experts

Each layer's feed-forward block is a mixture of eight experts, of which the
router picks two per token. The router's scores go through a softmax over
the chosen experts only, so the two gates sum to one.

Every rank holds all experts, each cut to 1/R of its hidden width: the up
and gate projections by rows, the down projection by columns. A rank's
output is therefore a partial sum, reduced by the second allreduce of the
layer.

The router is replicated: every rank routes every token, which costs a
small matrix product and saves a broadcast.
`)),
		doc("docs: describe the kernels", write("docs/kernels.md", `# Kernels

model/kernels holds the dense float32 kernels: Dot, MatMul, Axpy, Add,
RMSNorm, SiLU, Exp and Argmax. Matrices are row-major and a matrix product
computes each output as the dot product of a weight row and a token's
input row.

The kernels never let a token's result depend on the other tokens of a
batch: a verify pass over k+1 tokens must reproduce, bit for bit, what
decode steps compute one token at a time.
`)),
		doc("docs: add contribution notes", write("CONTRIBUTING.md", `# Contributing

- Run go vet ./... and go test ./... before sending a change.
- Changes on the hot path (kernels, attention, communicator, moe,
  speculative) need benchmark numbers: run the bench binary ten times on the
  parent and on your change, alternating, and compare with benchstat.
- Keep the engine free of dependencies outside the standard library.
`)),
		doc("docs: explain how to run the engine", appendTo("README.md", `
## Running

`+"```"+`
go run ./cmd/infer -tokens 64
`+"```"+`

prints the generated tokens, the allreduce backend in use and the
acceptance length.
`)),
		doc("docs: how to check which allreduce runs", appendTo("docs/communicator.md", `
## Which backend runs?

`+"`go run ./cmd/infer`"+` prints the backend that the chain picks for one
token's hidden state. Set `+"`TESTBED_ALLREDUCE`"+` to try another one; an
ineligible choice falls through the chain as usual.
`)),
		doc("docs: note what limits acceptance", appendTo("docs/speculative.md", `
## Acceptance

The draft guesses well when the target's hidden state stays close to the
token embedding, which the small output projections of the random model
ensure. With k = 3 a verify step emits about three and a half tokens on the
benchmark's prompt.
`)),
		doc("docs: comparing two commits", appendTo("docs/benchmarks.md", `
## Comparing two commits

Build the bench binary at both commits, run each ten times, alternating, and
compare with benchstat:

`+"```"+`
for i in $(seq 10); do ./old.test -test.bench . -test.benchtime 64x >>old.txt; ./new.test -test.bench . -test.benchtime 64x >>new.txt; done
benchstat old.txt new.txt
`+"```"+`
`)),
		doc("docs: add a FAQ", write("docs/faq.md", `# FAQ

**Why goroutines and not real devices?** The engine shows the structure of
tensor-parallel inference, its collectives and its fallbacks, without GPUs.

**Why are the weights random?** Only speed is studied; the weights are
seeded so that every run computes the same tokens.

**Why CPU time in the benchmarks?** The ranks share one core, so CPU time is
the work done; wall time would add whatever else the host runs.
`)),
		doc("docs: add a roadmap", write("docs/roadmap.md", `# Roadmap

- Batched requests: several sequences per verify step.
- Tree drafts (topk > 1) as in EAGLE-2.
- A one-shot custom allreduce for the smallest messages.
`)),
		doc("docs: note the cache layout", appendTo("docs/attention.md", `
## Memory

A cache holds, per position, the keys of the rank's heads followed by no
padding: position p's keys start at p × heads × head width. Truncating a
cache moves its length only; the memory is reused by the next extend.
`)),
		doc("docs: explain the noise of the benchmarks", appendTo("docs/benchmarks.md", `
## Noise

Each benchmark reports the median of its cycles. On an idle two-core host
the run-to-run spread of tok/s is a percent or two; busy hosts add more, so
compare commits by alternating runs rather than back to back.
`)),
		doc("docs: add a license", write("LICENSE", `Copyright 2025 The infer authors.

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software, to deal in the software without restriction, subject to
the condition that this notice is included in all copies.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND.
`)),
		doc("docs: how to run the tests", appendTo("README.md", `
## Testing

`+"`go test ./...`"+` checks, among other things, that tensor parallelism
matches a single rank, that all allreduce backends agree, and that
speculative decoding emits exactly the tokens of greedy decoding.
`)),
		doc("docs: describe the model's shape", write("docs/model.md", `# Model

| setting | value |
|---|---|
| vocabulary | 1024 |
| hidden width | 128 |
| heads | 8 of width 16 |
| layers | 4 |
| experts | 8, top 2, hidden width 64 |
| ranks | 8 |
| context | 512 positions |

Attention and expert outputs are scaled down by 0.1 at initialization,
which keeps the residual stream close to the token embedding.
`)),
		doc("docs: profiling the benchmarks", write("docs/profiling.md", `# Profiling

`+"```"+`
go test -c -o bench.test ./bench
./bench.test -test.run '^$' -test.bench VerifyStep -test.benchtime 256x -test.cpuprofile cpu.prof
go tool pprof -top bench.test cpu.prof
`+"```"+`

The ranks are goroutines, so their time shows under model.(*Model).runRank,
not under the benchmark function.
`)),
		doc("docs: point the README at the design notes", appendTo("README.md", `
## Design notes

See docs/: communicator.md, attention.md, speculative.md and benchmarks.md.
`)),
	}
}

func testSteps() []step {
	test := func(subject, path, text string) step {
		return step{subject: subject, author: anyone, edits: []edit{appendTo(path, text)}}
	}
	return []step{
		test("kernels: test Axpy", "model/kernels/kernels_test.go", `
func TestAxpy(t *testing.T) {
	y := []float32{1, 2, 3}
	Axpy(y, 2, []float32{1, 0, -1})
	if want := []float32{3, 2, 1}; !slices.Equal(y, want) {
		t.Errorf("Axpy = %v, want %v", y, want)
	}
}
`),
		test("kernels: test Add", "model/kernels/kernels_test.go", `
func TestAdd(t *testing.T) {
	y := []float32{1, 2}
	Add(y, []float32{0.5, -2})
	if want := []float32{1.5, 0}; !slices.Equal(y, want) {
		t.Errorf("Add = %v, want %v", y, want)
	}
}
`),
		test("kernels: test SiLU", "model/kernels/kernels_test.go", `
func TestSiLU(t *testing.T) {
	for _, x := range []float32{-4, -1, 0, 0.5, 3} {
		want := float64(x) / (1 + math.Exp(-float64(x)))
		if got := SiLU(x); math.Abs(float64(got)-want) > 1e-6 {
			t.Errorf("SiLU(%g) = %g, want %g", x, got, want)
		}
	}
}
`),
		test("kernels: test Exp", "model/kernels/kernels_test.go", `
func TestExp(t *testing.T) {
	for _, x := range []float32{-80, -10, -1, 0, 1, 10} {
		want := math.Exp(float64(x))
		if got := float64(Exp(x)); math.Abs(got-want) > 1e-6*want {
			t.Errorf("Exp(%g) = %g, want %g", x, got, want)
		}
	}
}
`),
		test("kernels: test Matrix.Row", "model/kernels/kernels_test.go", `
func TestMatrixRow(t *testing.T) {
	m := NewMatrix(2, 3)
	copy(m.Data, []float32{1, 2, 3, 4, 5, 6})
	if got := m.Row(1); !slices.Equal(got, []float32{4, 5, 6}) {
		t.Errorf("Row(1) = %v", got)
	}
	if cap(m.Row(0)) != 3 {
		t.Error("Row(0) can grow into row 1")
	}
}
`),
		test("attention: test cache geometry", "attention/attention_test.go", `
func TestCacheGeometry(t *testing.T) {
	c := NewCache(3, 8, 10)
	if c.Width() != 24 || c.Cap() != 10 {
		t.Errorf("width %d, cap %d; want 24 and 10", c.Width(), c.Cap())
	}
}
`),
		test("attention: one key attends to itself", "attention/attention_test.go", `
func TestSingleKey(t *testing.T) {
	for _, name := range []string{Naive, Tiled} {
		b, err := New(name, 4)
		if err != nil {
			t.Fatal(err)
		}
		c, q := filled(1, 9)
		out := make([]float32, c.Width())
		b.Decode(out, q, c)
		if !slices.Equal(out, c.V[:c.Width()]) {
			t.Errorf("%s: one position must return its value, got %v", name, out)
		}
	}
}
`),
		test("communicator: one rank needs no reduction", "communicator/communicator_test.go", `
func TestSingleRank(t *testing.T) {
	g, err := NewGroup(1, Options{Segment: 4})
	if err != nil {
		t.Fatal(err)
	}
	buf := []float32{1, 2, 3, 4}
	g.AllReduce(0, buf)
	if !slices.Equal(buf, []float32{1, 2, 3, 4}) {
		t.Errorf("one rank changed its buffer to %v", buf)
	}
}
`),
		test("communicator: test the link scrambler", "communicator/communicator_test.go", `
func TestScrambleRoundTrip(t *testing.T) {
	p := make([]byte, 4+4*16)
	encode(p, []float32{1, -2, 3.5, 0, 1e-3, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17})
	orig := slices.Clone(p)
	scramble(p)
	if slices.Equal(p, orig) {
		t.Fatal("scramble left the packet unchanged")
	}
	scramble(p)
	if !slices.Equal(p, orig) {
		t.Error("scrambling twice does not restore the packet")
	}
	verify(p)
}
`),
		test("communicator: Explain names the reasons", "communicator/communicator_test.go", `
func TestExplainReasons(t *testing.T) {
	g, err := NewGroup(8, Options{Segment: 16, DisableCustom: true})
	if err != nil {
		t.Fatal(err)
	}
	_, skipped := g.Explain(512)
	if len(skipped) == 0 || !strings.HasPrefix(skipped[0], "ring: ") {
		t.Errorf("skipped = %q, want the ring's reason first", skipped)
	}
}
`),
		test("model: the default configuration is valid", "model/model_test.go", `
func TestDefaultConfigValid(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}
`),
		test("model: test Truncate", "model/model_test.go", `
func TestTruncate(t *testing.T) {
	m, err := New(small())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Forward(prompt(10, m.Config().Vocab), 1); err != nil {
		t.Fatal(err)
	}
	m.Truncate(4)
	if m.Len() != 4 {
		t.Errorf("Len after Truncate(4) = %d", m.Len())
	}
	m.Truncate(9)
	if m.Len() != 4 {
		t.Errorf("Truncate(9) grew the model to %d", m.Len())
	}
}
`),
		test("speculative: greedy decoding is repeatable", "speculative/speculative_test.go", `
func TestGreedyRepeatable(t *testing.T) {
	cfg := config(attention.Tiled, communicator.Ring)
	var runs [][]int
	for range 2 {
		target, err := model.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Greedy(context.Background(), target, prompt(20, cfg.Vocab), 8)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, out)
	}
	if !slices.Equal(runs[0], runs[1]) {
		t.Errorf("two greedy runs differ: %v and %v", runs[0], runs[1])
	}
}
`),
		test("moe: a single expert takes the whole gate", "moe/moe_test.go", `
func TestRouteTopOne(t *testing.T) {
	r := &Router{W: &kernels.Matrix{Rows: 2, Cols: 1, Data: []float32{1, -1}}, TopK: 1}
	experts, gates, logits := make([]int, 1), make([]float32, 1), make([]float32, 2)
	r.Route(experts, gates, logits, []float32{-3}, 1)
	if experts[0] != 1 || gates[0] != 1 {
		t.Errorf("expert %d with gate %g, want expert 1 with gate 1", experts[0], gates[0])
	}
}
`),
		test("bench: prompts are repeatable", "bench/workload_test.go", `
func TestPromptRepeatable(t *testing.T) {
	a, b := Prompt(16, 100, 3), Prompt(16, 100, 3)
	if !slices.Equal(a, b) {
		t.Errorf("two prompts with one seed differ: %v, %v", a, b)
	}
	for _, tok := range a {
		if tok < 0 || tok >= 100 {
			t.Fatalf("token %d outside the vocabulary", tok)
		}
	}
}
`),
		test("communicator: Backend agrees with Explain", "communicator/communicator_test.go", `
func TestBackendMatchesExplain(t *testing.T) {
	g, err := NewGroup(8, Options{Segment: 16})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{128, 512, 4096, 1 << 16, 3 << 20} {
		if got, _ := g.Explain(n); got != g.Backend(n) {
			t.Errorf("%d floats: Backend says %s, Explain %s", n, g.Backend(n), got)
		}
	}
}
`),
		test("attention: append after truncate overwrites", "attention/attention_test.go", `
func TestAppendAfterTruncate(t *testing.T) {
	c := NewCache(1, 2, 4)
	if err := c.Append([]float32{1, 1, 2, 2, 3, 3}, []float32{1, 1, 2, 2, 3, 3}, 3); err != nil {
		t.Fatal(err)
	}
	c.Truncate(1)
	if err := c.Append([]float32{9, 9}, []float32{8, 8}, 1); err != nil {
		t.Fatal(err)
	}
	if c.Len != 2 || c.K[2] != 9 || c.V[3] != 8 {
		t.Errorf("len %d, K %v, V %v", c.Len, c.K[:4], c.V[:4])
	}
}
`),
		test("model: head width of the default model", "model/model_test.go", `
func TestDefaultHeadDim(t *testing.T) {
	if got := DefaultConfig().HeadDim(); got != 16 {
		t.Errorf("HeadDim = %d, want 16", got)
	}
}
`),
		test("speculative: the checkpoint after prefill", "speculative/speculative_test.go", `
func TestMarkAfterPrefill(t *testing.T) {
	cfg := config(attention.Tiled, communicator.Ring)
	target, err := model.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	draft, err := NewDraft(target)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := NewDecoder(target, draft, 2)
	if err != nil {
		t.Fatal(err)
	}
	first, err := dec.Prefill(prompt(30, cfg.Vocab))
	if err != nil {
		t.Fatal(err)
	}
	cp := dec.Mark()
	if cp.targetLen != 30 || cp.draftLen != 30 || cp.pending != first {
		t.Errorf("checkpoint %+v after a 30-token prompt emitting %d", cp, first)
	}
}
`),
		test("kernels: MatMul over two tokens", "model/kernels/kernels_test.go", `
func TestMatMulTwoTokens(t *testing.T) {
	w := &Matrix{Rows: 2, Cols: 2, Data: []float32{1, 2, 3, 4}}
	out := make([]float32, 4)
	MatMul(out, []float32{1, 0, 0, 1}, 2, w)
	if want := []float32{1, 3, 2, 4}; !slices.Equal(out, want) {
		t.Errorf("MatMul = %v, want %v", out, want)
	}
}
`),
		test("moe: a zero gate contributes nothing", "moe/moe_test.go", `
func TestZeroGate(t *testing.T) {
	ex := Expert{
		Up:   &kernels.Matrix{Rows: 1, Cols: 1, Data: []float32{2}},
		Gate: &kernels.Matrix{Rows: 1, Cols: 1, Data: []float32{3}},
		Down: &kernels.Matrix{Rows: 1, Cols: 1, Data: []float32{4}},
	}
	s, err := NewShard([]Expert{ex})
	if err != nil {
		t.Fatal(err)
	}
	out := []float32{5}
	s.Forward(out, []float32{1}, 1, []int{0}, []float32{0})
	if out[0] != 0 {
		t.Errorf("out = %g, want 0", out[0])
	}
}
`),
	}
}

// noteSteps add comments inside function bodies: code files change, the
// compiled code does not.
func noteSteps() []step {
	note := func(subject, path, anchor, text string) step {
		return step{subject: subject, author: anyone, edits: []edit{insertAfter(path, anchor+"\n", text)}}
	}
	return []step{
		note("attention: comment the decode state", "attention/tiled.go", "func (t *tiled) Decode(out, q []float32, c *Cache) {",
			"\t// One query: the per-query state arrays hold a single entry.\n"),
		note("attention: explain why scratch only grows", "attention/tiled.go", "func (t *tiled) grow(tokens int, c *Cache) {",
			"\t// Scratch only grows: a prefill sizes it once for the steps after.\n"),
		note("attention: note why l cannot be zero", "attention/tiled.go", "func (t *tiled) finish(out []float32, tokens int, c *Cache) {",
			"\t// l is at least one: the maximum's own term is exp(0).\n"),
		note("attention: comment the shared score buffer", "attention/naive.go", "func (n *naive) query(out, q []float32, c *Cache, pos int) {",
			"\t// The heads share scores: each overwrites what it uses.\n"),
		note("attention: comment the cache layout in Append", "attention/attention.go", "func (c *Cache) Append(k, v []float32, tokens int) error {",
			"\t// A position's keys and values sit at the same offset in K and V.\n"),
		note("attention: say why scores are scaled", "attention/attention.go", "func scale(headDim int) float32 {",
			"\t// 1/sqrt(d) keeps the scores' spread independent of the head width.\n"),
		note("attention: backends are per rank", "attention/attention.go", "func New(name string, maxSeq int) (Backend, error) {",
			"\t// Each rank needs its own: backends keep scratch between calls.\n"),
		note("communicator: comment the link depth", "communicator/link.go", "func newLink() *link {",
			"\t// A few packets in flight let a sender run ahead of its receiver, as a\n\t// real link's credits do.\n"),
		note("communicator: note the byte order", "communicator/link.go", "func encode(p []byte, floats []float32) {",
			"\t// Little-endian, like every host the engine runs on.\n"),
		note("communicator: the root has no parent", "communicator/tree.go", "func newTree(ranks int) *tree {",
			"\t// Rank 0 is the root and has no parent links.\n"),
		note("communicator: comment the tree walk", "communicator/tree.go", "func (t *tree) allReduce(rank int, buf []float32) {",
			"\t// Children at stride s are rank+s; the parent is rank-s at the stride\n\t// where rank leaves the loop.\n"),
		note("communicator: one bounce buffer per rank", "communicator/naive.go", "func newNaive(ranks int) *naive {",
			"\t// Each rank stages through its own bounce buffer, so no locking.\n"),
		note("communicator: comment the release channel", "communicator/ring.go", "func newRing(ranks, seg int) *ring {",
			"\t// release is replaced at every call, so a rank that starts the next\n\t// call early waits on the new channel.\n"),
		note("communicator: why mod", "communicator/communicator.go", "func mod(a, n int) int {",
			"\t// Go's % keeps the sign of a, and ranks count backwards past zero.\n"),
		note("communicator: keep the backend list in sync", "communicator/options.go", "func knownBackend(name string) bool {",
			"\t// Keep in sync with the constants above and with the chain in choose.\n"),
		note("model: Truncate keeps the memory", "model/model.go", "func (m *Model) Truncate(n int) {",
			"\t// The caches keep their data; only the lengths move.\n"),
		note("model: shards are copies", "model/model.go", "func newRank(cfg Config, w *Weights, id int) (*rank, error) {",
			"\t// Shards are copies, not views: each rank owns its weights, as each\n\t// GPU owns its memory.\n"),
		note("model: comment the rank loop", "model/model.go", "func (m *Model) runRank(rk *rank, t, logitTokens int) {",
			"\t// Every rank runs the whole layer stack; the ranks meet only in the\n\t// allreduces.\n"),
		note("model: comment the rope table", "model/rope.go", "func newRope(headDim, maxSeq int) *rope {",
			"\t// Angles are computed once in float64 and stored as float32.\n"),
		note("model: what stack is for", "model/weights.go", "func stack(ms ...*kernels.Matrix) *kernels.Matrix {",
			"\t// It fuses the q, k and v shards into one matrix: one product, not three.\n"),
		note("model: why norms are not exactly one", "model/weights.go", "func (in *Init) Norm(n int) []float32 {",
			"\t// Not exactly one, so that a norm's weights are not a no-op.\n"),
		note("model: the order of the checks matters", "model/config.go", "func (c Config) Validate() error {",
			"\t// Later checks divide by values that earlier ones vouch for.\n"),
		note("kernels: comment the epsilon", "model/kernels/kernels.go", "func RMSNorm(out, x, weight []float32) {",
			"\t// The epsilon keeps an all-zero row finite.\n"),
		note("kernels: the tie rule matters", "model/kernels/kernels.go", "func Argmax(x []float32) int {",
			"\t// Greedy decoding depends on the tie rule: keep the first maximum.\n"),
		note("kernels: why x is resliced", "model/kernels/kernels.go", "func Axpy(y []float32, a float32, x []float32) {",
			"\t// Reslicing x lets the compiler drop the bounds checks in the loop.\n"),
		note("moe: why taken scans", "moe/moe.go", "func taken(idx []int, x int) bool {",
			"\t// idx holds at most TopK entries: a scan is the cheapest lookup.\n"),
		note("moe: scratch comes from the first expert", "moe/moe.go", "func NewShard(experts []Expert) (*Shard, error) {",
			"\t// Scratch is sized from the first expert; all share one shape.\n"),
		note("moe: tokens pick their own experts", "moe/moe.go", "func (s *Shard) Forward(out, h []float32, tokens int, experts []int, gates []float32) {",
			"\t// Tokens run one at a time: each has its own experts and gates.\n"),
		note("speculative: State needs a position", "speculative/draft.go", "func (dr *Draft) State() []float32 {",
			"\t// Valid only while the draft holds at least one position.\n"),
		note("speculative: why truncation rewinds", "speculative/decoder.go", "func (dc *Decoder) Rewind(cp Checkpoint) {",
			"\t// Truncation is enough: positions past the checkpoint are never read.\n"),
		note("speculative: comment the proposal loop", "speculative/decoder.go", "func (dc *Decoder) propose() ([]int, error) {",
			"\t// k is small; the proposals slice does not show in profiles.\n"),
		note("bench: prompts use their own stream", "bench/workload.go", "func Prompt(n, vocab int, seed uint64) []int {",
			"\t// A stream apart from the weights', so prompts do not mirror them.\n"),
		note("attention: why -1e30 and not -Inf", "attention/tiled.go", "func (t *tiled) begin(tokens int, c *Cache) {",
			"\t// -1e30, not -Inf: exp(-Inf - -Inf) would be NaN on the first tile.\n"),
		note("attention: tile is Extend's body for one query", "attention/tiled.go", "func (t *tiled) tile(i, h int, q []float32, c *Cache, lo, hi int) {",
			"\t// The decode path's copy of Extend's inner loop, for one query.\n"),
		note("attention: naive queries run alone", "attention/naive.go", "func (n *naive) Extend(out, q []float32, tokens int, c *Cache) {",
			"\t// No tiles to share: each query runs on its own.\n"),
		note("attention: Truncate never grows", "attention/attention.go", "func (c *Cache) Truncate(n int) {",
			"\t// Truncating past the end keeps what is there.\n"),
		note("communicator: why CRC-32C", "communicator/link.go", "func seal(p []byte) {",
			"\t// CRC-32C has hardware support on amd64 and arm64.\n"),
		note("communicator: packets arrive in order", "communicator/link.go", "func (l *link) recv(dst []float32, add bool) {",
			"\t// Packets arrive in order: a link is one channel.\n"),
		note("communicator: the naive sum has one order", "communicator/naive.go", "func (n *naive) allReduce(rank int, buf []float32) {",
			"\t// Rank 0 adds in rank order, so every element is summed the same way.\n"),
		note("communicator: a forced backend goes first", "communicator/options.go", "func (o Options) choose(ranks, n int) (string, []string) {",
			"\t// A forced backend is tried first; the chain after it is unchanged.\n"),
		note("communicator: naive has no conditions", "communicator/options.go", "func (o Options) ineligible(b string, ranks, n int) string {",
			"\t// naive has no conditions: it is the last resort.\n"),
		note("model: draw once, then shard", "model/model.go", "func New(cfg Config) (*Model, error) {",
			"\t// Weights are drawn once in full and then cut into shards, so the model\n\t// computes the same function for any number of ranks.\n"),
		note("model: one stream for all weights", "model/weights.go", "func NewWeights(cfg Config) *Weights {",
			"\t// One stream for all weights: the order of the draws is part of what a\n\t// seed means.\n"),
		note("model: which rotary layout", "model/rope.go", "func (r *rope) Apply(x []float32, heads, pos int) {",
			"\t// Rotates the pairs (i, i+half), the layout of GPT-NeoX and Llama.\n"),
		note("moe: softmax over the chosen experts", "moe/moe.go", "func (r *Router) Route(experts []int, gates, logits, h []float32, tokens int) {",
			"\t// Softmax over the chosen experts only, as Mixtral does.\n"),
		note("speculative: why the draft starts at 1", "speculative/decoder.go", "func (dc *Decoder) Prefill(prompt []int) (int, error) {",
			"\t// The prompt's first token has no feature before it, so the draft\n\t// starts at position 1.\n"),
		note("speculative: Greedy is the reference", "speculative/decoder.go", "func Greedy(ctx context.Context, target *model.Model, prompt []int, n int) ([]int, error) {",
			"\t// One decode step per token: the slowest way, and the reference.\n"),
		note("speculative: the LM head is shared", "speculative/draft.go", "func (dr *Draft) logitsOf(h []float32, rows int) []float32 {",
			"\t// The LM head is the target's: draft and target score one vocabulary.\n"),
		note("bench: rewinding the decoder rewinds the target", "bench/workload.go", "func (w *Workload) DecodeCycle(steps int) error {",
			"\t// Rewinding the decoder rewinds the target too.\n"),
		note("kernels: one allocation per matrix", "model/kernels/kernels.go", "func NewMatrix(rows, cols int) *Matrix {",
			"\t// One allocation per matrix; rows are views into it.\n"),
	}
}

// refactorSteps change code without changing what the benchmarks run.
func refactorSteps() []step {
	return []step{{
		subject: "model: rename growInts to growIndices",
		author:  anyone,
		edits: []edit{
			replace("model/model.go", "b.experts = growInts(b.experts, t*cfg.TopK)", "b.experts = growIndices(b.experts, t*cfg.TopK)"),
			replace("model/model.go", "func growInts(s []int, n int) []int {", "func growIndices(s []int, n int) []int {"),
		},
	}, {
		subject: "model: add Config.String for logs",
		author:  anyone,
		edits: []edit{insertAfter("model/config.go", "func (c Config) HeadDim() int { return c.Hidden / c.Heads }\n", `
// String summarizes the configuration for logs.
func (c Config) String() string {
	return fmt.Sprintf("vocab=%d hidden=%d heads=%d layers=%d experts=%d/top-%d ranks=%d attention=%s",
		c.Vocab, c.Hidden, c.Heads, c.Layers, c.Experts, c.TopK, c.Ranks, c.Attention)
}
`)},
	}, {
		subject: "attention: list the backends in one place",
		author:  anyone,
		edits: []edit{
			replace("attention/attention.go", "import (\n\t\"fmt\"\n\t\"math\"\n)", "import (\n\t\"fmt\"\n\t\"math\"\n\t\"strings\"\n)"),
			replace("attention/attention.go", `return nil, fmt.Errorf("attention: unknown backend %q (want naive or tiled)", name)`,
				`return nil, fmt.Errorf("attention: unknown backend %q (want %s)", name, strings.Join(Names(), " or "))`),
			replace("attention/attention.go", "func scale(headDim int) float32 {", "// Names returns the names New accepts.\nfunc Names() []string { return []string{Naive, Tiled} }\n\nfunc scale(headDim int) float32 {"),
		},
	}, {
		subject: "speculative: count proposals and acceptances",
		author:  anyone,
		edits: []edit{
			replace("speculative/decoder.go", "\tverify []int\n\thidden []float32\n}\n", `	verify []int
	hidden []float32
	stats  Stats
}

// Stats counts what a decoder's steps did.
type Stats struct {
	Steps, Proposed, Accepted int
}

// Stats returns the counts since the decoder was made.
func (dc *Decoder) Stats() Stats { return dc.stats }
`),
			insertAfter("speculative/decoder.go", "\temitted = append(append(emitted, proposals[:accepted]...), bonus)\n",
				"\tdc.stats.Steps++\n\tdc.stats.Proposed += len(proposals)\n\tdc.stats.Accepted += accepted\n"),
		},
	}, {
		subject: "communicator: name the packet header size",
		author:  anyone,
		edits: []edit{
			replace("communicator/link.go", "// linkDepth is the number", "// headerBytes is the size of a packet's header, its CRC.\nconst headerBytes = 4\n\n// linkDepth is the number"),
			replace("communicator/link.go", "\t\tl.free <- make([]byte, 4+4*packetFloats)", "\t\tl.free <- make([]byte, headerBytes+4*packetFloats)"),
			replace("communicator/naive.go", "\t\tn.bounce[r] = make([]byte, 4+4*packetFloats)", "\t\tn.bounce[r] = make([]byte, headerBytes+4*packetFloats)"),
		},
	}, {
		subject: "model: name the shard helpers after what they make",
		author:  anyone,
		edits: []edit{
			replace("model/weights.go", "// rows returns rows lo..hi-1 of m as a new matrix (a column-parallel\n// shard).\nfunc rows(", "// rowShard returns rows lo..hi-1 of m as a new matrix (a column-parallel\n// shard).\nfunc rowShard("),
			replace("model/weights.go", "// cols returns columns lo..hi-1 of m as a new matrix (a row-parallel\n// shard).\nfunc cols(", "// colShard returns columns lo..hi-1 of m as a new matrix (a row-parallel\n// shard).\nfunc colShard("),
			replace("model/model.go", "Up:   rows(l.Up[e], flo, fhi),", "Up:   rowShard(l.Up[e], flo, fhi),"),
			replace("model/model.go", "Gate: rows(l.Gate[e], flo, fhi),", "Gate: rowShard(l.Gate[e], flo, fhi),"),
			replace("model/model.go", "Down: cols(l.Down[e], flo, fhi),", "Down: colShard(l.Down[e], flo, fhi),"),
			replace("model/model.go", "stack(rows(l.Q, lo, hi), rows(l.K, lo, hi), rows(l.V, lo, hi))", "stack(rowShard(l.Q, lo, hi), rowShard(l.K, lo, hi), rowShard(l.V, lo, hi))"),
			replace("model/model.go", "o:        cols(l.O, lo, hi),", "o:        colShard(l.O, lo, hi),"),
			replace("model/model.go", "lmHead: rows(w.LMHead, id*vs, (id+1)*vs)", "lmHead: rowShard(w.LMHead, id*vs, (id+1)*vs)"),
		},
	}, {
		subject: "communicator: expose a group's options",
		author:  anyone,
		edits: []edit{insertAfter("communicator/communicator.go", "func (g *Group) Ranks() int { return g.ranks }\n",
			"\n// Options returns the options the group was made with.\nfunc (g *Group) Options() Options { return g.opts }\n")},
	}, {
		subject: "moe: add Router.Experts",
		author:  anyone,
		edits: []edit{insertAfter("moe/moe.go", "type Router struct {\n\tW    *kernels.Matrix // experts × hidden\n\tTopK int\n}\n",
			"\n// Experts returns the number of experts the router chooses from.\nfunc (r *Router) Experts() int { return r.W.Rows }\n")},
	}, {
		subject: "Ignore build outputs",
		author:  anyone,
		edits:   []edit{write(".gitignore", "*.test\n*.prof\n/infer\n")},
	}, {
		subject: "Add a Makefile",
		author:  anyone,
		edits: []edit{write("Makefile", `.PHONY: test bench vet

test:
	go test ./...

vet:
	go vet ./...

bench:
	go test -run '^$$' -bench . -benchtime 64x ./bench
`)},
	}, {
		subject: "speculative: split the draft's input embedding out of Forward",
		author:  anyone,
		edits: []edit{
			replace("speculative/draft.go", `	for i, tok := range tokens {
		if tok < 0 || tok >= cfg.Vocab {
			return nil, nil, fmt.Errorf("speculative: draft token %d at %d is outside the vocabulary of %d", tok, i, cfg.Vocab)
		}
		copy(b.in[i*2*d:], dr.target.Embed.Row(tok))
		copy(b.in[i*2*d+d:(i+1)*2*d], features[i*d:(i+1)*d])
	}
`, `	if err := dr.embed(tokens, features); err != nil {
		return nil, nil, err
	}
`),
			replace("speculative/draft.go", "// logitsOf returns", `// embed writes each token's embedding followed by its feature row into the
// input buffer.
func (dr *Draft) embed(tokens []int, features []float32) error {
	d := dr.cfg.Hidden
	for i, tok := range tokens {
		if tok < 0 || tok >= dr.cfg.Vocab {
			return fmt.Errorf("speculative: draft token %d at %d is outside the vocabulary of %d", tok, i, dr.cfg.Vocab)
		}
		copy(dr.buf.in[i*2*d:], dr.target.Embed.Row(tok))
		copy(dr.buf.in[i*2*d+d:(i+1)*2*d], features[i*d:(i+1)*d])
	}
	return nil
}

// logitsOf returns`),
		},
	}, {
		subject: "attention: say how full the cache is when Append fails",
		author:  anyone,
		edits: []edit{replace("attention/attention.go",
			`return fmt.Errorf("attention: cache of %d positions cannot take %d more after %d", c.Cap(), tokens, c.Len)`,
			`return fmt.Errorf("attention: cache full: %d positions held, %d more asked, room for %d", c.Len, tokens, c.Cap())`)},
	}, {
		subject: "kernels: print matrices by shape",
		author:  anyone,
		edits: []edit{
			replace("model/kernels/kernels.go", "import \"math\"\n", "import (\n\t\"fmt\"\n\t\"math\"\n)\n"),
			insertAfter("model/kernels/kernels.go", "func (m *Matrix) Row(i int) []float32 {\n\treturn m.Data[i*m.Cols : (i+1)*m.Cols : (i+1)*m.Cols]\n}\n",
				"\n// String returns the shape of m.\nfunc (m *Matrix) String() string { return fmt.Sprintf(\"%d×%d matrix\", m.Rows, m.Cols) }\n"),
		},
	}}
}
