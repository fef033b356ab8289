package embed

import (
	"encoding/json"
	"os"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer is the SentencePiece-unigram tokenizer of USE-lite. It reproduces
// the JS runtime's encoder (@energetic-ai/embeddings 0.2.0) exactly, quirks
// included, because the model was only ever validated against those ids:
//   - the input is NFKC-normalised, prefixed with U+2581 and every U+0020
//     becomes U+2581;
//   - the lattice walks code points, a position no piece matches becomes
//     the unknown id 0 with score 0, and a score of exactly 0 counts as "not
//     yet reached" (so ties and zero sums go to the later candidate);
//   - the best path is walked back by each piece's UTF-16 length, not its
//     code-point length;
//   - runs of unknown ids collapse into one.
//
// A Tokenizer is immutable after LoadTokenizer and safe for concurrent use.
type Tokenizer struct {
	pieces []string
	back   []int32 // UTF-16 length of each piece: the JS backtracking step
	nodes  []trieNode
	edges  map[trieEdge]int32 // (parent node, rune) -> child node
}

type trieNode struct {
	end   bool
	runes int32 // depth = piece length in code points
	id    int32
	score float64
}

type trieEdge struct {
	node int32
	r    rune
}

// reservedPieces are the control pieces (unknown, <s>, </s>, extras) that the
// JS runtime never matches in text.
const reservedPieces = 6

// separator is the SentencePiece word-boundary mark.
const separator = "\u2581"

// LoadTokenizer reads vocab.json: a JSON array of [piece, score] pairs whose
// position is the token id.
func LoadTokenizer(path string) (*Tokenizer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fileError("load tokenizer", path, err)
	}
	var pairs [][2]json.RawMessage
	if err := json.Unmarshal(b, &pairs); err != nil {
		return nil, errorf("load tokenizer", KindModelInvalid, path, "%v", err)
	}
	if len(pairs) <= reservedPieces {
		return nil, errorf("load tokenizer", KindModelInvalid, path, "only %d pieces", len(pairs))
	}
	t := &Tokenizer{
		pieces: make([]string, len(pairs)),
		back:   make([]int32, len(pairs)),
		nodes:  []trieNode{{}},
		edges:  make(map[trieEdge]int32, 4*len(pairs)),
	}
	for i, p := range pairs {
		var piece string
		var score float64
		if json.Unmarshal(p[0], &piece) != nil || json.Unmarshal(p[1], &score) != nil {
			return nil, errorf("load tokenizer", KindModelInvalid, path, "entry %d is not [string, number]", i)
		}
		t.pieces[i] = piece
		// At least 1, so that walking back over any piece always progresses.
		t.back[i] = int32(max(1, len(utf16.Encode([]rune(piece)))))
		if i >= reservedPieces && piece != "" {
			t.insert(piece, score, int32(i))
		}
	}
	return t, nil
}

func (t *Tokenizer) insert(piece string, score float64, id int32) {
	n := int32(0)
	depth := int32(0)
	for _, r := range piece {
		depth++
		c, ok := t.edges[trieEdge{n, r}]
		if !ok {
			c = int32(len(t.nodes))
			t.nodes = append(t.nodes, trieNode{runes: depth})
			t.edges[trieEdge{n, r}] = c
		}
		n = c
	}
	t.nodes[n].end, t.nodes[n].score, t.nodes[n].id = true, score, id
}

// VocabSize is the number of pieces, i.e. one more than the largest id.
func (t *Tokenizer) VocabSize() int { return len(t.pieces) }

// Piece returns the text of token id.
func (t *Tokenizer) Piece(id int) string { return t.pieces[id] }

// candidate is one lattice edge: a piece covering sym[start:start+runes].
type candidate struct {
	start, runes int32
	id           int32
	score        float64
}

// Encode returns the token ids of s; nil if s normalises to nothing.
// It does not cap the length: the model keeps the first MaxTokens.
func (t *Tokenizer) Encode(s string) []int {
	s = norm.NFKC.String(s)
	if s == "" {
		return nil
	}
	sym := []rune(separator + strings.ReplaceAll(s, " ", separator))
	n := len(sym)

	// Viterbi over the lattice, relaxing edges in order of their start. The
	// JS runtime instead visits end positions in order and, within one, the
	// edges by start; both orders apply the updates to any one best[end] in
	// the same sequence (ascending start), and best[start] is final before
	// any edge leaving start is relaxed, so the results are identical.
	best := make([]float64, n+1)
	word := make([]int32, n+1)
	relax := func(end int, c candidate) {
		sc := c.score + best[c.start]
		if best[end] == 0 || sc >= best[end] {
			best[end], word[end] = sc, c.id
		}
	}
	for i := 0; i < n; i++ {
		found := false
		node := int32(0)
		for j := i; j < n; j++ {
			c, ok := t.edges[trieEdge{node, sym[j]}]
			if !ok {
				break
			}
			node = c
			if nd := &t.nodes[c]; nd.end {
				found = true
				relax(j+1, candidate{int32(i), nd.runes, nd.id, nd.score})
			}
		}
		if !found {
			relax(i+1, candidate{int32(i), 1, 0, 0})
		}
	}

	var rev []int
	prevUnknown := false
	for at := n; at > 0; at -= int(t.back[word[at]]) {
		id := int(word[at])
		if !(prevUnknown && id == 0) {
			rev = append(rev, id)
		}
		prevUnknown = id == 0
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}
