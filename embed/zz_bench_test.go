package embed

import (
	"context"
	"fmt"
	"testing"
)

func BenchmarkQOne(b *testing.B) {
	m, _ := loadUSELite("model/dist")
	ctx := context.Background()
	for b.Loop() {
		m.Embed(ctx, []string{"auth problems when logging in"})
	}
}
func BenchmarkQBatch(b *testing.B) {
	m, _ := loadUSELite("model/dist")
	ctx := context.Background()
	ss := make([]string, 64)
	for i := range ss {
		ss[i] = fmt.Sprintf("fix auth bug %d. apps: code-editor, terminal. path: notes/auth/login-failure-%d.md", i, i)
	}
	toks := 0
	for _, s := range ss {
		toks += len(m.tok.Encode(s))
	}
	b.Logf("tokens/text %.1f", float64(toks)/64)
	for b.Loop() {
		m.Embed(ctx, ss)
	}
}
