package policy_test

import (
	"strings"
	"testing"

	"github.com/semfs/semfs/server/policy"
)

// example is the policy, verbatim.
const example = `{
  "default": {"read": ["**"], "write": ["**"], "tag": ["**"], "hide": []},
  "apps": {
    "agent":  {"write": ["agent/**", "scratch/**"], "tag": ["own"], "hide": ["secrets/**", "**/*.key"]},
    "viewer": {"write": []},
    "":       {"write": [], "hide": ["**"]}
  }
}`

func mustParse(t *testing.T, s string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

func TestDecisions(t *testing.T) {
	p := mustParse(t, example)
	type want struct{ see, read, write, tag bool }
	cases := []struct {
		app, path, createdBy string
		want                 want
	}{
		// agent: field-by-field override of default.
		{"agent", "agent/notes.md", "", want{true, true, true, false}},
		{"agent", "agent", "", want{true, true, true, false}}, // "dir/**" holds dir itself
		{"agent", "agentx/a", "", want{true, true, false, false}},
		{"agent", "scratch/a/b/c", "agent", want{true, true, true, true}},
		{"agent", "mail/inbox", "agent", want{true, true, false, true}}, // tag "own"
		{"agent", "mail/inbox", "mail", want{true, true, false, false}},
		{"agent", "mail/inbox", "", want{true, true, false, false}},
		// hidden: the directory and everything below it; "**/*.key" at any depth.
		{"agent", "secrets", "", want{false, false, false, false}},
		{"agent", "secrets/a", "agent", want{false, false, false, false}},
		{"agent", "secrets/a/b/c", "", want{false, false, false, false}},
		{"agent", "secretsx", "", want{true, true, false, false}},
		{"agent", "id.key", "", want{false, false, false, false}},
		{"agent", "agent/deep/er/id.key", "agent", want{false, false, false, false}},
		{"agent", "agent/x.key/inside", "", want{false, false, false, false}}, // hidden parent hides children
		{"agent", "agent/x.keys", "", want{true, true, true, false}},
		{"agent", "", "", want{true, true, false, false}}, // the root is never hidden
		// trailing slashes and "." are cleaned as callers spell paths.
		{"agent", "/secrets/", "", want{false, false, false, false}},
		{"agent", "/agent/a/", "", want{true, true, true, false}},
		// viewer: read-only, default otherwise.
		{"viewer", "anything/at/all", "viewer", want{true, true, false, true}},
		// an app with no entry has default's rules.
		{"mail", "secrets/a", "", want{true, true, true, true}},
		// "": everything hidden but the root.
		{"", "a", "", want{false, false, false, false}},
		{"", "", "", want{true, true, false, true}}, // the root: never hidden, tags nothing
	}
	for _, c := range cases {
		t.Run(c.app+":"+c.path+":"+c.createdBy, func(t *testing.T) {
			a := p.For(c.app)
			path := policy.Clean(c.path)
			got := want{!a.Hidden(path), a.May(policy.Read, path, c.createdBy),
				a.May(policy.Write, path, c.createdBy), a.May(policy.Tag, path, c.createdBy)}
			if got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			// Decide agrees with May and Hidden, and names a rule.
			e := p.Explain(c.app, c.path, c.createdBy)
			exp := want{e.See.Allowed, e.Read.Allowed, e.Write.Allowed, e.Tag.Allowed}
			if exp != c.want {
				t.Errorf("Explain %+v disagrees with May: want %+v", e, c.want)
			}
			for _, d := range []policy.Decision{e.See, e.Read, e.Write, e.Tag} {
				if d.Rule == "" {
					t.Errorf("a decision without its rule: %+v", e)
				}
			}
		})
	}
}

func TestStarStaysInOneSegment(t *testing.T) {
	p := mustParse(t, `{"default": {"hide": ["*.tmp", "logs/*"]}}`)
	a := p.For("any")
	for path, hidden := range map[string]bool{
		"a.tmp": true, "d/a.tmp": false, "logs/x": true, "logs/x/y": true, // below a hidden dir
		"logs": false, "x/logs/y": false,
	} {
		if got := a.Hidden(path); got != hidden {
			t.Errorf("Hidden(%q) = %v, want %v", path, got, hidden)
		}
	}
}

func TestTrailingSlashPattern(t *testing.T) {
	p := mustParse(t, `{"default": {"write": ["out/"], "hide": ["tmp/"]}}`)
	a := p.For("x")
	if !a.May(policy.Write, "out", "") || !a.May(policy.Write, "out/a/b", "") || a.May(policy.Write, "outx", "") {
		t.Error(`"out/" must mean out and everything below it, and nothing else`)
	}
	if !a.Hidden("tmp") || !a.Hidden("tmp/a") || a.Hidden("tmpx") {
		t.Error(`"tmp/" must hide tmp and everything below it`)
	}
}

func TestOverrideAndReadOnly(t *testing.T) {
	p := mustParse(t, `{"default": {"write": ["w/**"], "tag": []}, "apps": {"a": {"tag": ["own", "t/**"]}, "ro": {"write": []}, "own": {"write": ["own"]}}}`)
	if got, from := p.For("a").Patterns(policy.Write); strings.Join(got, ",") != "w/**" || from != "default" {
		t.Errorf("a's write = %v from %s, want default's", got, from)
	}
	if got, from := p.For("a").Patterns(policy.Tag); strings.Join(got, ",") != "t/**,own" || from != "apps.a" {
		t.Errorf("a's tag = %v from %s", got, from)
	}
	if got, from := p.For("a").Patterns(policy.Read); strings.Join(got, ",") != "**" || from != "built-in default" {
		t.Errorf("a's read = %v from %s, want today's behaviour", got, from)
	}
	if !p.For("ro").ReadOnly() || p.For("a").ReadOnly() || p.For("own").ReadOnly() {
		t.Error("ReadOnly must be exactly an empty write list")
	}
	if p.For("own").May(policy.Write, "x", "") || !p.For("own").May(policy.Write, "x", "own") {
		t.Error(`write ["own"] must allow exactly the app's own files`)
	}
	// The unattributed caller owns nothing, even files with no creator.
	q := mustParse(t, `{"apps": {"": {"tag": ["own"]}}}`)
	if q.For("").May(policy.Tag, "x", "") {
		t.Error(`"own" must never match for the unattributed caller`)
	}
}

func TestNoPolicyFieldsIsToday(t *testing.T) {
	for _, src := range []string{`{}`, `{"default": {}}`, `{"apps": {}}`} {
		a := mustParse(t, src).For("x")
		if a.Hidden("a/b") || !a.May(policy.Read, "a", "") || !a.May(policy.Write, "a", "") || !a.May(policy.Tag, "a", "") {
			t.Errorf("%s: an empty policy must allow everything", src)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{``, "1:1: the file ends too soon"},
		{`{"default": {"read": ["**"]}`, "1:29: the file ends too soon"},
		{"{\n  \"default\": {\"reed\": []}\n}", `2:15: default: unknown field "reed"`},
		{"{\n \"apps\": {\n  \"agent\": {\"hide\": [\"a/[b\"]}}}", `3:22: apps.agent.hide: pattern "a/[b": not a valid glob`},
		{`{"apps": {"a": {"read": ["own"]}}}`, `1:26: apps.a.read: "own" means`},
		{`{"apps": {"a": {"hide": ["/abs"]}}}`, `1:26: apps.a.hide: pattern "/abs": patterns are relative`},
		{`{"apps": {"a": {"hide": ["a/../b"]}}}`, `'.' or '..'`},
		{`{"apps": {"a": {"hide": [""]}}}`, `empty pattern`},
		{`{"apps": {"a": {"hide": [3]}}}`, `1:26: apps.a.hide: want a pattern (a string), found a number`},
		{`{"apps": {"a": {"hide": "x"}}}`, `1:25: apps.a.hide: want a list of patterns`},
		{`{"apps": {"a": {"hide": null}}}`, `want a list of patterns, found null`},
		{`{"apps": {"bad name": {}}}`, `1:11: app "bad name": only letters`},
		{`{"apps": {"a": {}, "a": {}}}`, `1:20: apps: "a" is given twice`},
		{`{"default": {}, "extra": 1}`, `1:17: unknown field "extra"`},
		{`{} {}`, `1:4: data after the policy object`},
		{`{"default": {"read": ["a",]}}`, `1:27: invalid character ']'`},
		{"{\n\t\"default\": nope}", `2:14: invalid character 'o'`},
		{`[]`, `1:1: the file: want an object, found '['`},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			_, err := policy.Parse([]byte(c.src))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestExplainNamesTheRule(t *testing.T) {
	p := mustParse(t, example)
	e := p.Explain("agent", "secrets/db/pw", "")
	if !strings.Contains(e.See.Rule, `apps.agent.hide "secrets/**" matches the directory "secrets"`) {
		t.Errorf("see: %q", e.See.Rule)
	}
	e = p.Explain("agent", "scratch/x", "")
	if e.Write.Rule != `apps.agent.write "scratch/**"` || e.Read.Rule != `default.read "**"` {
		t.Errorf("write %q, read %q", e.Write.Rule, e.Read.Rule)
	}
	if e = p.Explain("viewer", "a", ""); e.Write.Rule != "apps.viewer.write is empty" || !e.ReadOnly {
		t.Errorf("viewer: %+v", e)
	}
}
