package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semfs/semfs/integration/semfstest"
)

// TestDocsCurlExamples runs every `curl --unix-socket` example of README.md and
// docs/ against a real daemon, through the real curl, as a reader would paste
// it: an example the daemon refuses for its form (415 for a body without
// Content-Type: application/json, 400, 405) fails. A 404 passes (the examples
// name files the reader has, this daemon has not). Examples with a placeholder
// (…) or that stream (-N) are left out.
func TestDocsCurlExamples(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("SEMFS_REQUIRE_TOOLS") == "1" {
			t.Fatal("curl not found and SEMFS_REQUIRE_TOOLS=1 (apt-get install curl)")
		}
		t.Skip("curl not found")
	}
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
	files, _ := filepath.Glob(filepath.Join(semfstest.RepoDir(), "docs", "*.md"))
	files = append(files, filepath.Join(semfstest.RepoDir(), "README.md"))
	ran, readme := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range curlExamples(string(b)) {
			if strings.Contains(ex.cmd, "…") || strings.Contains(ex.cmd, " -N ") {
				continue
			}
			body := filepath.Join(t.TempDir(), "body")
			script := strings.ReplaceAll(ex.vars+"\n"+ex.cmd, "/var/berth/semantic-fs.sock", d.Socket) +
				` -s -o "$BODY" -w '%{http_code}'`
			cmd := exec.Command("bash", "-c", script)
			cmd.Env = append(os.Environ(), "BODY="+body)
			out, err := cmd.Output()
			code := strings.TrimSpace(string(out))
			answer, _ := os.ReadFile(body)
			ran++
			if filepath.Base(f) == "README.md" {
				readme++
			}
			if err != nil || !(strings.HasPrefix(code, "2") || code == "404") {
				t.Errorf("%s: %s\n  status %s (%v): %s", filepath.Base(f), ex.cmd, code, err, answer)
			}
		}
	}
	if ran < 8 || readme == 0 {
		t.Errorf("ran %d curl examples, %d of README.md's; README.md and docs/ hold more", ran, readme)
	}
}

// curlExample is one curl command of a code block, its continuation lines
// joined, and the block's variable assignments before it (S=..., J=...).
type curlExample struct{ vars, cmd string }

// curlExamples finds the curl commands of markdown's indented code blocks.
func curlExamples(markdown string) []curlExample {
	var out []curlExample
	var vars []string
	lines := strings.Split(markdown, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "    ") {
			vars = nil // a block ends
			continue
		}
		// The tour runs curl as the daemon's user (sudo: a root daemon's
		// socket is root's); the test is that user already.
		l = strings.TrimPrefix(strings.TrimSpace(l), "sudo ")
		if strings.HasPrefix(l, "S=") {
			vars = append(vars, l)
			continue
		}
		if !strings.HasPrefix(l, "curl --unix-socket") {
			continue
		}
		cmd := l
		for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, `\`) + " " + strings.TrimSpace(lines[i])
		}
		out = append(out, curlExample{vars: strings.Join(vars, "\n"), cmd: cmd})
	}
	return out
}
