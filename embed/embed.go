package embed

import "context"

// Embedder turns short texts into L2-normalised vectors. Implementations must be
// safe for concurrent use: the daemon embeds queries while tagging goes on.
type Embedder interface {
	// Name is stored beside every vector so that vectors of different models are
	// never compared with each other.
	Name() string
	// Dims is the length of every vector Embed returns.
	Dims() int
	// Threshold is the cosine similarity at or above which a file counts as a
	// semantic match in the hybrid query. Each model has its own.
	Threshold() float64
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Model describes a model whose vectors the daemon can store and rank, whether or
// not it runs in-process (clients may send vectors they computed themselves).
type Model struct {
	Name      string  `json:"name"`
	Dims      int     `json:"dims"`
	Threshold float64 `json:"threshold"`
}

// MiniLM is the model the reference SDK computes on the client side; its threshold
// of 0.2 is the one the reference tuned for short tag text.
var MiniLM = Model{Name: "all-MiniLM-L6-v2", Dims: 384, Threshold: 0.2}
