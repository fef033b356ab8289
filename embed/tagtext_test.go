package embed_test

import (
	"testing"

	"github.com/semfs/semfs/embed"
)

func TestTagText(t *testing.T) {
	for _, tc := range []struct {
		task string
		apps []string
		path string
		want string
	}{
		{"fix auth bug", []string{"code-editor", "terminal"}, "notes/auth/login-failure.md", "fix auth bug. code-editor, terminal. notes auth login failure"},
		{"  fix   auth bug ", nil, "a_b.c/d.tar.gz", "fix auth bug. a b c d tar"},
		{"", []string{"", " browser "}, "x.txt", "browser. x"},
		{"task", nil, ".gitignore", "task. gitignore"},
		{"", nil, "README", "README"},
		{"", nil, "", ""},
		{"  ", nil, "---", "---"},
		{"", nil, "a/...", "a"},
		{"日本語のテキスト", []string{"エディタ"}, "メモ/認証.md", "日本語のテキスト. エディタ. メモ 認証"},
	} {
		if got := embed.TagText(tc.task, tc.apps, tc.path); got != tc.want {
			t.Errorf("TagText(%q, %q, %q) = %q, want %q", tc.task, tc.apps, tc.path, got, tc.want)
		}
	}
}
