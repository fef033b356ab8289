package embed

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// UseLite describes the in-process model. Its threshold was calibrated on
// short tag text by ./calibrate (see calibrate/README.md).
var UseLite = Model{Name: "use-lite", Dims: modelDims, Threshold: 0.31}

// chunkTokens is the number of tokens one forward pass packs together: big
// enough that the matrix products stream each weight matrix once for many
// rows, small enough that the scratch memory stays within a few MB.
const chunkTokens = 512

// USELite is Universal Sentence Encoder Lite running in-process. It is safe
// for concurrent use: the weights are read-only after LoadUSELite and each
// forward pass has its own scratch memory.
type USELite struct {
	tok       *Tokenizer
	enc       *encoder
	threshold float64
	workers   int
	// scratch keeps up to workers forward-pass workspaces between calls. A
	// sync.Pool would hand them to the GC at every cycle and the next batch
	// would reallocate megabytes; these stay, sized by the largest chunk seen.
	scratch chan *workspace
}

// LoadUSELite loads the model from dir, which holds the TF.js graph's
// model.json, its weight shards and vocab.json (see DefaultModelDir and
// model/fetch.sh). A missing directory or file gives an error of
// KindModelMissing; a malformed one KindModelInvalid.
func LoadUSELite(dir string) (Embedder, error) {
	m, err := loadUSELite(dir)
	if err != nil {
		// Not m: a nil *USELite in an Embedder would not compare equal to nil.
		return nil, err
	}
	return m, nil
}

func loadUSELite(dir string) (*USELite, error) { return loadUSELiteWith(dir, bestKernel) }

func loadUSELiteWith(dir string, kern kernel) (*USELite, error) {
	tok, err := LoadTokenizer(filepath.Join(dir, "vocab.json"))
	if err != nil {
		return nil, err
	}
	w, err := loadWeights(dir)
	if err != nil {
		return nil, err
	}
	enc, err := newEncoder(w, tok.VocabSize(), kern)
	if err != nil {
		return nil, &Error{Op: "load", Kind: KindModelInvalid, Path: dir, Err: err}
	}
	workers := runtime.GOMAXPROCS(0)
	return &USELite{tok: tok, enc: enc, threshold: UseLite.Threshold, workers: workers, scratch: make(chan *workspace, workers)}, nil
}

func (m *USELite) Name() string       { return UseLite.Name }
func (m *USELite) Dims() int          { return modelDims }
func (m *USELite) Threshold() float64 { return m.threshold }

// Tokenizer returns the model's tokenizer.
func (m *USELite) Tokenizer() *Tokenizer { return m.tok }

// Embed returns one L2-normalised 512-d vector per text. Only the first
// MaxTokens tokens of a text count (and only its first 16Ki characters are
// tokenized at all). A text with no non-space character is
// rejected with an error of KindInput wrapping ErrEmptyText, and then no
// vector is returned at all: nothing meaningful can be said about it, and
// failing loudly beats storing a vector that matches nothing.
// Embed checks ctx between chunks of the batch.
func (m *USELite) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	seqs := make([][]int32, len(texts))
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, errorf("embed", KindInput, "", "text %d: %w", i, ErrEmptyText)
		}
		ids := m.tok.Encode(clip(t))
		if len(ids) == 0 {
			return nil, errorf("embed", KindInput, "", "text %d: %w", i, ErrEmptyText)
		}
		if len(ids) > MaxTokens {
			ids = ids[:MaxTokens]
		}
		s := make([]int32, len(ids))
		for j, id := range ids {
			s[j] = int32(id)
		}
		seqs[i] = s
	}
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*modelDims)
	for i := range out {
		out[i] = flat[i*modelDims : (i+1)*modelDims : (i+1)*modelDims]
	}
	if err := m.run(ctx, seqs, out); err != nil {
		return nil, err
	}
	return out, nil
}

// maxTextRunes bounds the text handed to the tokenizer. The model reads only
// the first MaxTokens tokens, and a token spans at most a few dozen
// characters, so the cut lies far beyond anything the model sees; without it a
// multi-megabyte text would cost a lattice of that size for nothing.
const maxTextRunes = 16 * 1024

func clip(s string) string {
	if len(s) <= maxTextRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == maxTextRunes {
			return s[:i]
		}
		n++
	}
	return s
}

// serialKey marks a context made by Serial.
type serialKey struct{}

// Serial returns a context under which Embed computes the whole batch on the
// calling goroutine, one chunk after another, instead of on up to GOMAXPROCS
// goroutines of its own. A background caller that locked its goroutine to an OS
// thread of low priority (index/passage's worker, at nice 19) needs this: the
// kernel's priority is per thread, and forward passes run on the runtime's
// other threads would compete with the protocols' at normal priority.
func Serial(ctx context.Context) context.Context { return context.WithValue(ctx, serialKey{}, true) }

// run splits the batch into chunks of about chunkTokens tokens (at least one
// per worker when there is enough work) and runs them on up to m.workers
// goroutines, or on the caller's alone under Serial.
func (m *USELite) run(ctx context.Context, seqs [][]int32, out [][]float32) error {
	serial := ctx.Value(serialKey{}) != nil
	total := 0
	for _, s := range seqs {
		total += len(s)
	}
	per := chunkTokens
	if w := m.workers; !serial && w > 1 && total < w*chunkTokens {
		per = (total + w - 1) / w
	}
	var bounds []int // chunk i is seqs[bounds[i]:bounds[i+1]]
	bounds = append(bounds, 0)
	n := 0
	for i, s := range seqs {
		if n > 0 && n+len(s) > per {
			bounds = append(bounds, i)
			n = 0
		}
		n += len(s)
	}
	bounds = append(bounds, len(seqs))

	if serial {
		ws := m.workspace()
		defer m.release(ws)
		for c := 0; c < len(bounds)-1; c++ {
			if err := ctx.Err(); err != nil {
				return &Error{Op: "embed", Kind: KindCanceled, Err: err}
			}
			lo, hi := bounds[c], bounds[c+1]
			m.enc.forward(ws, seqs[lo:hi], out[lo:hi])
		}
		return nil
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(m.workers, len(bounds)-1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws := m.workspace()
			defer m.release(ws)
			for c := range next {
				lo, hi := bounds[c], bounds[c+1]
				m.enc.forward(ws, seqs[lo:hi], out[lo:hi])
			}
		}()
	}
	var err error
	for c := 0; c < len(bounds)-1; c++ {
		if err = ctx.Err(); err != nil {
			break
		}
		next <- c
	}
	close(next)
	wg.Wait()
	if err != nil {
		return &Error{Op: "embed", Kind: KindCanceled, Err: err}
	}
	return nil
}

// workspace takes a kept scratch workspace, or makes one when more callers run
// at once than m keeps; release keeps it again (or lets it go when m keeps
// enough).
func (m *USELite) workspace() *workspace {
	select {
	case ws := <-m.scratch:
		return ws
	default:
		return new(workspace)
	}
}

func (m *USELite) release(ws *workspace) {
	select {
	case m.scratch <- ws:
	default:
	}
}
