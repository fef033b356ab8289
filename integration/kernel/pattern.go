package kernel

import (
	"crypto/sha256"
	"strconv"
)

// Pattern returns n deterministic bytes for seed: SHA-256 in counter mode.
// The guest helper writes it and the host recomputes it, so the host can say
// exactly which acknowledged bytes are missing after a daemon crash.
func Pattern(seed string, n int) []byte {
	out := make([]byte, 0, n+sha256.Size)
	for k := 0; len(out) < n; k++ {
		s := sha256.Sum256([]byte(seed + "/" + strconv.Itoa(k)))
		out = append(out, s[:]...)
	}
	return out[:n]
}
