package embed

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/gonum"
)

// blasImpl provides gonum's SIMD dot and axpy for the attention loops.
var blasImpl gonum.Implementation

// Architecture of USE-lite as shipped in the TF.js graph. The loader checks
// every weight against these sizes, so a different graph fails at load time
// instead of producing wrong vectors.
const (
	embedDims  = 256  // token embedding width (layer 0 input)
	modelDims  = 512  // transformer width from layer 0's output on, and output size
	ffnDims    = 1536 // feed-forward hidden width
	heads      = 4    // attention heads per layer
	timingHalf = embedDims / 2
	// MaxTokens is the model's input cap: the graph keeps the first 128 token
	// ids of a text (ClipToMaxLength) and ignores the rest.
	MaxTokens = 128
	lnEpsilon = 1e-6  // layer_norm epsilon in the graph
	l2Floor   = 1e-12 // l2_normalize's minimum squared norm
)

// encoder holds USE-lite's weights. It is immutable after newEncoder and is
// shared by all goroutines; per-call scratch lives in a workspace.
type encoder struct {
	vocab  int
	emb    []float32 // vocab × embedDims
	timing []float32 // MaxTokens × embedDims: sin | cos position signal
	layers [2]encoderLayer
	tanh   dense // modelDims → modelDims
}

// encoderLayer is one pre-norm transformer layer:
//
//	a = x·Wres + MultiHeadAttention(LN1(x))·Wout   (Wres = identity in layer 1)
//	y = a + ReLU(LN2(a)·W1)·W2
type encoderLayer struct {
	in         int // input width: 256 for layer 0, 512 for layer 1
	scale      float32
	ln1g, ln1b []float32
	qkv, out   dense
	res        *dense // layer 0 only: widens the residual from 256 to 512
	ln2g, ln2b []float32
	ff1, ff2   dense
}

const (
	wApply = "module_apply_default/Encoder_en/KonaTransformer/Encode/"
	wVar   = "module/Encoder_en/KonaTransformer/Encode/"
)

// newEncoder picks the weights out of a TF.js manifest and checks their sizes.
//
// kern selects the kernel for the products (bestKernel, or kernFP32 for the
// reference).
func newEncoder(w map[string]tensor, vocab int, kern kernel) (*encoder, error) {
	var missing error
	get := func(name string, n int) []float32 {
		t, ok := w[name]
		switch {
		case missing != nil:
		case !ok:
			missing = fmt.Errorf("weight %s is missing", name)
		case len(t.data) != n:
			missing = fmt.Errorf("weight %s has %d values, want %d", name, len(t.data), n)
		default:
			return t.data
		}
		return nil
	}
	// The embedding table may have more rows than the vocabulary has pieces
	// (8002 rows for 8000 pieces here); it must not have fewer.
	rows := len(w["module/Embeddings_en"].data) / embedDims
	if rows < vocab {
		return nil, fmt.Errorf("embedding table has %d rows for %d vocabulary pieces", rows, vocab)
	}
	e := &encoder{vocab: vocab}
	e.emb = get("module/Embeddings_en", rows*embedDims)
	invTimescale := get(wApply+"TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", timingHalf)
	e.tanh = dense{in: modelDims, out: modelDims,
		w: get("module/Encoder_en/hidden_layers/tanh_layer_0/weights", modelDims*modelDims),
		b: get("module/Encoder_en/hidden_layers/tanh_layer_0/bias", modelDims)}
	if c := get("module_apply_default/Encoder_en/KonaTransformer/ClipToMaxLength/Less/y", 1); c != nil && int(c[0]) != MaxTokens {
		return nil, fmt.Errorf("graph clips to %v tokens, this encoder is built for %d", c[0], MaxTokens)
	}
	for i, in := range []int{embedDims, modelDims} {
		l := &e.layers[i]
		p := fmt.Sprintf("Layer_%d/TransformerLayer/", i)
		stack := wApply + "TransformerStack/" + p
		l.in = in
		l.ln1g = get(wApply+p+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", in)
		l.ln1b = get(wApply+p+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", in)
		l.qkv = dense{in: in, out: 3 * in,
			w: get(wVar+p+"MultiheadAttention/qkv_transform_single/kernel/part_0", in*3*in),
			b: get(wApply+p+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", 3*in)}
		l.out = dense{in: in, out: modelDims,
			w: get(wVar+p+"MultiheadAttention/output_transform_single/kernel/part_0", in*modelDims),
			b: get(wApply+p+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", modelDims)}
		if in != modelDims {
			l.res = &dense{in: in, out: modelDims,
				w: get(wApply+p+"dense/kernel/ConcatPartitions/concat", in*modelDims),
				b: get(wApply+p+"dense/bias/ConcatPartitions/concat", modelDims)}
		}
		l.ln2g = get(wApply+p+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", modelDims)
		l.ln2b = get(wApply+p+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", modelDims)
		l.ff1 = dense{in: modelDims, out: ffnDims,
			w: get(stack+"FFN/conv1/Tensordot/Reshape_1", modelDims*ffnDims),
			b: get(wApply+p+"FFN/conv1/bias/ConcatPartitions/concat", ffnDims)}
		l.ff2 = dense{in: ffnDims, out: modelDims,
			w: get(stack+"FFN/conv2/Tensordot/Reshape_1", ffnDims*modelDims),
			b: get(wApply+p+"FFN/conv2/bias/ConcatPartitions/concat", modelDims)}
		// The graph multiplies queries by a stored constant (1/sqrt(head width)).
		if s := get(stack+"MultiheadAttention/mul/y", 1); s != nil {
			l.scale = s[0]
		}
	}
	if missing != nil {
		return nil, missing
	}
	for i := range e.layers {
		l := &e.layers[i]
		for _, d := range []*dense{&l.qkv, &l.out, l.res, &l.ff1, &l.ff2} {
			if d != nil {
				d.pack(kern)
			}
		}
	}
	e.tanh.pack(kern)
	// The timing signal depends only on the position; computing it once here
	// takes sin/cos out of every call. The graph computes the angle in float32.
	e.timing = make([]float32, MaxTokens*embedDims)
	for p := 0; p < MaxTokens; p++ {
		row := e.timing[p*embedDims : (p+1)*embedDims]
		for j, inv := range invTimescale {
			angle := float64(float32(p) * inv)
			row[j] = float32(math.Sin(angle))
			row[timingHalf+j] = float32(math.Cos(angle))
		}
	}
	return e, nil
}

// workspace is the scratch memory of one forward pass, kept between calls
// (USELite.scratch) so a steady stream of batches allocates little beyond
// the returned vectors.
type workspace struct {
	x, y, h, qkv, ctx, att, ff []float32
	probs                      []float32
	pool                       []float32
	gemm                       gemmScratch
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n, n+n/4)
	}
	return b[:n]
}

// forward embeds a packed batch: seqs[i] are the (already capped, non-empty)
// token ids of text i; out[i] receives its L2-normalised 512-d vector.
// All texts' tokens go through each matrix multiplication together, so every
// weight matrix is read once per batch; attention stays within each text.
func (e *encoder) forward(ws *workspace, seqs [][]int32, out [][]float32) {
	total := 0
	for _, s := range seqs {
		total += len(s)
	}
	// The matrix products run on rows rounded up to the kernel's row block, so
	// that each weight panel is streamed once per block instead of once more
	// for every leftover row. Padding rows start at zero, are never attended
	// to or pooled, and stay finite (layer norm of a zero row is its bias).
	rows := total
	if rowAlign > 1 {
		rows = (total + rowAlign - 1) / rowAlign * rowAlign
	}
	ws.x = grow(ws.x, rows*modelDims)
	ws.y = grow(ws.y, rows*modelDims)
	x := ws.x[:rows*embedDims]
	clear(x[total*embedDims:])
	r := 0
	for _, s := range seqs {
		for p, id := range s {
			// The graph adds the token embedding twice (its sparse lookup and
			// the timing-signal step each add it), then the position signal.
			ev := e.emb[int(id)*embedDims : (int(id)+1)*embedDims]
			tv := e.timing[p*embedDims : (p+1)*embedDims]
			xr := x[r*embedDims : (r+1)*embedDims]
			for j := range xr {
				xr[j] = 2*ev[j] + tv[j]
			}
			r++
		}
	}
	e.layers[0].forward(ws, ws.x, ws.y, rows, total, seqs)
	e.layers[1].forward(ws, ws.y, ws.x, rows, total, seqs)
	h := ws.x

	// Mean over each text's tokens, then tanh(pool·W + b) and L2 norm.
	ws.pool = grow(ws.pool, len(seqs)*modelDims)
	r = 0
	for i, s := range seqs {
		pr := ws.pool[i*modelDims : (i+1)*modelDims]
		clear(pr)
		for range s {
			hr := h[r*modelDims : (r+1)*modelDims]
			for j := range pr {
				pr[j] += hr[j]
			}
			r++
		}
		inv := 1 / float32(len(s))
		for j := range pr {
			pr[j] *= inv
		}
	}
	ws.h = grow(ws.h, len(seqs)*modelDims)
	t := ws.h[:len(seqs)*modelDims]
	e.tanh.mulBias(&ws.gemm, t, ws.pool, len(seqs))
	for i := range seqs {
		v := t[i*modelDims : (i+1)*modelDims]
		var ss float32
		for j, a := range v {
			v[j] = float32(math.Tanh(float64(a)))
			ss += v[j] * v[j]
		}
		inv := float32(1 / math.Sqrt(float64(max(ss, l2Floor))))
		o := out[i][:modelDims]
		for j := range o {
			o[j] = v[j] * inv
		}
	}
}

// forward runs the layer on n packed token rows of x (n×l.in) into y (n×512);
// rows from real on are padding (see encoder.forward).
func (l *encoderLayer) forward(ws *workspace, x, y []float32, n, real int, seqs [][]int32) {
	in := l.in
	ws.h = grow(ws.h, n*modelDims)
	ws.qkv = grow(ws.qkv, n*3*modelDims)
	ws.ctx = grow(ws.ctx, n*modelDims)
	ws.att = grow(ws.att, n*modelDims)
	ws.ff = grow(ws.ff, n*ffnDims)

	h := ws.h[:n*in]
	layerNorm(h, x[:n*in], in, l.ln1g, l.ln1b)
	qkv := ws.qkv[:n*3*in]
	l.qkv.mulBias(&ws.gemm, qkv, h, n)
	ctx := ws.ctx[:n*in]
	clear(ctx[real*in:])
	base := 0
	for _, s := range seqs {
		l.attend(ws, qkv, ctx, base, len(s))
		base += len(s)
	}

	att := ws.att[:n*modelDims]
	if l.res != nil {
		l.res.start(att, n)
		addRows(att, l.out.b)
		l.res.mulAdd(&ws.gemm, att, x, n)
	} else {
		copy(att, x[:n*modelDims])
		addRows(att, l.out.b)
	}
	l.out.mulAdd(&ws.gemm, att, ctx, n)

	h = ws.h[:n*modelDims]
	layerNorm(h, att, modelDims, l.ln2g, l.ln2b)
	ff := ws.ff[:n*ffnDims]
	l.ff1.mulBias(&ws.gemm, ff, h, n)
	y = y[:n*modelDims]
	copy(y, att)
	addRows(y, l.ff2.b)
	l.ff2.mulAddReLU(&ws.gemm, y, ff, n)
}

// attend computes multi-head self-attention for the n rows of one text
// starting at row base, writing the heads' concatenated output into ctx.
func (l *encoderLayer) attend(ws *workspace, qkv, ctx []float32, base, n int) {
	ws.probs = grow(ws.probs, n)
	probs := ws.probs
	if attnAVX512 && (l.in/heads)%64 == 0 {
		l.attendAVX512(probs, qkv, ctx, base, n)
		return
	}
	l.attendGonum(probs, qkv, ctx, base, n)
}

// attendGonum is attend on gonum's dot and axpy, one call per key.
func (l *encoderLayer) attendGonum(probs, qkv, ctx []float32, base, n int) {
	in := l.in
	dh := in / heads
	stride := 3 * in
	for hd := 0; hd < heads; hd++ {
		qo, ko, vo := hd*dh, in+hd*dh, 2*in+hd*dh
		for i := base; i < base+n; i++ {
			q := qkv[i*stride+qo : i*stride+qo+dh]
			mx := float32(math.Inf(-1))
			for j := 0; j < n; j++ {
				k := qkv[(base+j)*stride+ko : (base+j)*stride+ko+dh]
				s := blasImpl.Sdot(dh, q, 1, k, 1) * l.scale
				probs[j] = s
				mx = max(mx, s)
			}
			var sum float32
			for j := 0; j < n; j++ {
				p := float32(math.Exp(float64(probs[j] - mx)))
				probs[j] = p
				sum += p
			}
			c := ctx[i*in+qo : i*in+qo+dh]
			clear(c)
			inv := 1 / sum
			for j := 0; j < n; j++ {
				p := probs[j] * inv
				v := qkv[(base+j)*stride+vo : (base+j)*stride+vo+dh]
				blasImpl.Saxpy(dh, p, v, 1, c, 1)
			}
		}
	}
}

// attendAVX512 is attend with the dot products, the softmax and the weighted
// sum of each query row in one assembly call each (attnScores, softmaxRow,
// attnMix), instead of a gonum call per key: with texts of ~20 tokens the
// calls cost more than their arithmetic.
func (l *encoderLayer) attendAVX512(probs, qkv, ctx []float32, base, n int) {
	in := l.in
	dh := in / heads
	stride := 3 * in
	_ = qkv[(base+n)*stride-1]
	_ = ctx[(base+n)*in-1]
	probs = probs[:n]
	for hd := 0; hd < heads; hd++ {
		qo, ko, vo := hd*dh, in+hd*dh, 2*in+hd*dh
		for i := base; i < base+n; i++ {
			attnScores(&probs[0], &qkv[i*stride+qo], &qkv[base*stride+ko], stride, n, dh, l.scale)
			softmaxRow(&probs[0], n)
			attnMix(&ctx[i*in+qo], &probs[0], &qkv[base*stride+vo], stride, n, dh)
		}
	}
}

// addRows adds b to every len(b)-wide row of x.
func addRows(x, b []float32) {
	for r := 0; r+len(b) <= len(x); r += len(b) {
		xr := x[r : r+len(b)]
		for j, v := range b {
			xr[j] += v
		}
	}
}

// layerNorm normalises each d-wide row of x into out: g·(x-mean)/sqrt(var+eps)+b.
// With AVX-512 the rows go through layerNormRows: this loop's sums are one
// long chain of dependent adds.
func layerNorm(out, x []float32, d int, g, b []float32) {
	if attnAVX512 && d%32 == 0 && len(x) >= d {
		rows := len(x) / d
		_, _, _ = out[rows*d-1], g[d-1], b[d-1]
		layerNormRows(&out[0], &x[0], &g[0], &b[0], d, rows, 1/float32(d), lnEpsilon)
		return
	}
	layerNormGo(out, x, d, g, b)
}

// layerNormGo is layerNorm in Go.
func layerNormGo(out, x []float32, d int, g, b []float32) {
	for r := 0; r+d <= len(x); r += d {
		xr := x[r : r+d]
		or := out[r : r+d]
		var mean float32
		for _, v := range xr {
			mean += v
		}
		mean /= float32(d)
		var variance float32
		for _, v := range xr {
			dv := v - mean
			variance += dv * dv
		}
		variance /= float32(d)
		inv := float32(1 / math.Sqrt(float64(variance+lnEpsilon)))
		g, b := g[:d], b[:d]
		for j, v := range xr {
			or[j] = g[j]*(v-mean)*inv + b[j]
		}
	}
}
