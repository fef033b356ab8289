package embed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/semfs/semfs/integration/require"
)

// TestPackedGemmMatchesGonum checks the assembly kernels (and their row
// tails) against gonum's blas32 on the shapes the encoder uses and odd ones.
func TestPackedGemmMatchesGonum(t *testing.T) {
	if panelWidth == 0 {
		if runtime.GOARCH == "amd64" {
			// Every x86-64 CI machine has AVX2+FMA (2013 on): not having
			// them there would leave the assembly untested in silence.
			require.Environment(t, "no AVX2+FMA or AVX-512 on this CPU: the gonum path is used")
		}
		t.Skip("not amd64: the gonum path is used") // platform: the kernels are amd64 assembly
	}
	// Every kernel this CPU can run, not only the one it would choose.
	widths := []int{16}
	if panelWidth == 32 {
		widths = append(widths, 32)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, width := range widths {
		for _, sz := range []struct{ m, k, n int }{
			{1, 256, 768}, {3, 5, 16}, {4, 1, 32}, {5, 512, 1536}, {7, 1536, 512}, {9, 3, 64}, {17, 7, 96}, {67, 256, 512}, {130, 512, 512},
		} {
			a, d := randomProduct(rng, sz.m, sz.k, sz.n)
			want := make([]float32, sz.m*sz.n)
			d.start(want, sz.m)
			d.mulAdd(&gemmScratch{}, want, a, sz.m) // gonum: not packed yet
			d.packWidth(width)
			got := make([]float32, sz.m*sz.n)
			d.start(got, sz.m)
			d.mulAdd(&gemmScratch{}, got, a, sz.m)
			for i := range got {
				if diff := math.Abs(float64(got[i] - want[i])); diff > 1e-4*math.Sqrt(float64(sz.k)) {
					t.Fatalf("width %d m=%d k=%d n=%d: element %d = %v, gonum %v", width, sz.m, sz.k, sz.n, i, got[i], want[i])
				}
			}
		}
	}
}

// TestAttendAVX512MatchesGonum checks the assembly attention (attnScores,
// attnMix) against the gonum loop it replaces, for both layers' widths and
// text lengths around its four-key blocks.
func TestAttendAVX512MatchesGonum(t *testing.T) {
	if !attnAVX512 {
		t.Skip("no AVX-512 on this CPU: attention runs on gonum")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, in := range []int{embedDims, modelDims} {
		l := encoderLayer{in: in, scale: 1 / float32(math.Sqrt(float64(in/heads)))}
		for _, n := range []int{1, 3, 4, 5, 19, 128} {
			const base = 2 // the text starts after another one's rows
			qkv := make([]float32, (base+n)*3*in)
			for i := range qkv {
				qkv[i] = rng.Float32()*4 - 2
			}
			want := make([]float32, (base+n)*in)
			got := make([]float32, (base+n)*in)
			probs := make([]float32, n)
			l.attendGonum(probs, qkv, want, base, n)
			l.attendAVX512(probs, qkv, got, base, n)
			for i := range got {
				if diff := math.Abs(float64(got[i] - want[i])); diff > 1e-5 {
					t.Fatalf("in=%d n=%d: element %d = %v, gonum %v", in, n, i, got[i], want[i])
				}
			}
		}
	}
}

// TestLayerNormRowsMatchesGo checks the AVX-512 layer norm against the Go loop.
func TestLayerNormRowsMatchesGo(t *testing.T) {
	if !attnAVX512 {
		t.Skip("no AVX-512 on this CPU: layer norm runs in Go")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, d := range []int{embedDims, modelDims} {
		for _, rows := range []int{1, 3, 40} {
			x := make([]float32, rows*d)
			for i := range x {
				x[i] = rng.Float32()*6 - 2
			}
			x[0] = 50 // one outlier, as residual streams have
			g, b := make([]float32, d), make([]float32, d)
			for i := range g {
				g[i], b[i] = rng.Float32()*2, rng.Float32()-0.5
			}
			want, got := make([]float32, rows*d), make([]float32, rows*d)
			layerNormGo(want, x, d, g, b)
			layerNorm(got, x, d, g, b)
			for i := range got {
				if diff := math.Abs(float64(got[i] - want[i])); diff > 1e-5 {
					t.Fatalf("d=%d rows=%d: element %d = %v, Go %v", d, rows, i, got[i], want[i])
				}
			}
		}
	}
}

// gemmShape is one dense layer's k×n.
type gemmShape struct{ k, n int }

// benchKernels names the kernels this CPU can run.
func benchKernels() map[string]kernel {
	ks := map[string]kernel{}
	if panelWidth != 0 {
		ks["fp32"] = kernFP32
	}
	if useAMX {
		ks["amx"] = kernAMX
	}
	if useBF16 {
		ks["avx512-bf16"] = kernBF16
	}
	if useBF16W {
		ks["bf16-weights"] = kernBF16W
	}
	return ks
}

// randomLayers is dense layers of the given shapes with random weights,
// packed for kern; flopPerRow is their products' floating-point operations
// for one row of input, bytes the size of their packed weights.
func randomLayers(shapes []gemmShape, kern kernel) (ds []dense, flopPerRow, bytes int) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, sz := range shapes {
		w := make([]float32, sz.k*sz.n)
		for i := range w {
			w[i] = rng.Float32()*2 - 1
		}
		d := dense{in: sz.k, out: sz.n, w: w}
		d.pack(kern)
		ds = append(ds, d)
		flopPerRow += 2 * sz.k * sz.n
		bytes += 4 * sz.k * sz.n
		if d.bf != nil || d.wbf != nil {
			bytes -= 2 * sz.k * sz.n
		}
	}
	return ds, flopPerRow, bytes
}

// runLayers is b's loop: the m rows of a through every layer of ds.
func runLayers(b *testing.B, ds []dense, m int) {
	a := make([]float32, m*1536)
	for i := range a {
		a[i] = float32(i%7)/7 - 0.5
	}
	c := make([]float32, m*1536)
	s := &gemmScratch{}
	for b.Loop() {
		for i := range ds {
			ds[i].mulAdd(s, c, a, m)
		}
	}
}

// BenchmarkGemm is one 512-token chunk's products on the shapes of the
// encoder (k×n per layer), for each kernel this CPU can run; GFLOP/s is per
// core.
func BenchmarkGemm(b *testing.B) {
	shapes := []gemmShape{{256, 768}, {256, 512}, {256, 512}, {512, 1536}, {1536, 512}, {512, 1536}, {512, 512}, {512, 1536}, {1536, 512}}
	const m = 512
	for name, kern := range benchKernels() {
		b.Run(name, func(b *testing.B) {
			ds, flop, _ := randomLayers(shapes, kern)
			runLayers(b, ds, m)
			b.ReportMetric(float64(m*flop)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkGemmRows is one forward pass's products for a few rows (a query
// or a tag: 4 to 32 token rows) on each kernel this CPU can run: the whole
// model's weights are read once a pass, so with few rows the pass waits on
// memory, not on the FMAs. GB/s is the weights' bytes read a second.
func BenchmarkGemmRows(b *testing.B) {
	shapes := []gemmShape{{256, 768}, {256, 512}, {256, 512}, {512, 1536}, {1536, 512}, {512, 1536}, {512, 512}, {512, 1536}, {1536, 512}, {512, 512}}
	for name, kern := range benchKernels() {
		for _, m := range []int{4, 8, 32} {
			b.Run(fmt.Sprintf("%s/rows=%d", name, m), func(b *testing.B) {
				ds, _, bytes := randomLayers(shapes, kern)
				runLayers(b, ds, m)
				b.ReportMetric(float64(bytes)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
	}
}

// TestSoftmaxRowMatchesGo checks the AVX-512 softmax (its polynomial exp and
// its masked last block) against math.Exp, for every length a text can have,
// and that it writes nothing past n.
func TestSoftmaxRowMatchesGo(t *testing.T) {
	if !attnAVX512 {
		t.Skip("no AVX-512 on this CPU: the softmax runs in Go")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for n := 1; n <= MaxTokens+3; n++ {
		for _, spread := range []float32{0.1, 10, 200} {
			p := make([]float32, n+16)
			for i := range p {
				p[i] = (rng.Float32()*2 - 1) * spread
			}
			p[n] = 12345 // past the row: must stay
			want := make([]float64, n)
			mx := math.Inf(-1)
			for _, v := range p[:n] {
				mx = math.Max(mx, float64(v))
			}
			sum := 0.0
			for i, v := range p[:n] {
				want[i] = math.Exp(float64(v) - mx)
				sum += want[i]
			}
			softmaxRow(&p[0], n)
			for i := range want {
				w := want[i] / sum
				if diff := math.Abs(float64(p[i]) - w); diff > 1e-6*w+1e-9 {
					t.Fatalf("n=%d spread %v: p[%d] = %v, want %v", n, spread, i, p[i], w)
				}
			}
			if p[n] != 12345 {
				t.Fatalf("n=%d: wrote past the row: %v", n, p[n])
			}
		}
	}
}

// randomProduct is a random m×k input and a k×n dense layer (weights and
// inputs in [-1, 1), biases in [0, 1)), row-major and not packed yet.
func randomProduct(rng *rand.Rand, m, k, n int) ([]float32, dense) {
	a := make([]float32, m*k)
	w := make([]float32, k*n)
	bias := make([]float32, n)
	for i := range a {
		a[i] = rng.Float32()*2 - 1
	}
	for i := range w {
		w[i] = rng.Float32()*2 - 1
	}
	for i := range bias {
		bias[i] = rng.Float32()
	}
	return a, dense{in: k, out: n, w: w, b: bias}
}
