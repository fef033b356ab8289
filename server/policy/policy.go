package policy

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// Field names a right, as the file spells it.
type Field int

const (
	Read Field = iota
	Write
	Tag
	Hide
	nFields
)

var fieldNames = [nFields]string{"read", "write", "tag", "hide"}

func (f Field) String() string { return fieldNames[f] }

// Own is the word that, in write or tag, stands for the files the app created.
const Own = "own"

// Policy is a parsed, compiled policy file. The zero value is not usable; a nil
// *Policy means "no policy" to every caller in this repository.
type Policy struct {
	def  *App
	apps map[string]*App
	// src is every named app in the file, for Apps.
	names []string
}

// App is one app's effective rules, compiled.
type App struct {
	name   string
	fields [nFields]ruleSet
	dirs   dirCache // hidden answers per directory
}

// ruleSet is one field of one app: its patterns and where they came from.
type ruleSet struct {
	from  string // "default" or "apps.NAME", for explanations
	field Field
	pats  []pattern
	own   bool // "own" is in the list
	given bool // the list is set (possibly empty); false: today's behaviour
}

// Load reads and parses the file at path.
func Load(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	p, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("policy %s:%w", path, err)
	}
	return p, nil
}

// Parse parses and compiles a policy file. An error says "LINE:COL: what".
func Parse(b []byte) (*Policy, error) {
	f, err := parseFile(b)
	if err != nil {
		return nil, err
	}
	p := &Policy{apps: make(map[string]*App, len(f.apps))}
	p.def = compile("", "default", f.def, entry{})
	for name, e := range f.apps {
		p.apps[name] = compile(name, "apps."+quoteApp(name), f.def, e)
		p.names = append(p.names, name)
	}
	sort.Strings(p.names)
	return p, nil
}

func quoteApp(name string) string {
	if name == "" {
		return `""`
	}
	return name
}

// compile builds an app's effective rules: each field from e when given, else
// from def, else today's behaviour.
func compile(name, from string, def, e entry) *App {
	a := &App{name: name}
	for fl := Field(0); fl < nFields; fl++ {
		switch {
		case e.fields[fl] != nil:
			a.fields[fl] = newRuleSet(from, fl, e.fields[fl].pats)
		case def.fields[fl] != nil:
			a.fields[fl] = newRuleSet("default", fl, def.fields[fl].pats)
		default:
			var pats []string
			if fl != Hide {
				pats = []string{"**"}
			}
			a.fields[fl] = newRuleSet("built-in default", fl, pats)
			a.fields[fl].given = false
		}
	}
	return a
}

func newRuleSet(from string, fl Field, pats []string) ruleSet {
	rs := ruleSet{from: from, field: fl, given: true}
	for _, s := range pats {
		if s == Own {
			rs.own = true
			continue
		}
		rs.pats = append(rs.pats, compilePattern(s))
	}
	return rs
}

// For returns app's rules: its own entry's, else default's.
func (p *Policy) For(app string) *App {
	if a, ok := p.apps[app]; ok {
		return a
	}
	return p.def
}

// Default returns the rules of every app the file does not name.
func (p *Policy) Default() *App { return p.def }

// Apps lists the apps the file names, sorted ("" first when named).
func (p *Policy) Apps() []string { return append([]string(nil), p.names...) }

// Name is the app these rules are for ("" also for default's).
func (a *App) Name() string { return a.name }

// ReadOnly says whether the app may write nothing at all (an empty write
// list): every mutation answers EROFS, as a read-only export does.
func (a *App) ReadOnly() bool {
	w := &a.fields[Write]
	return len(w.pats) == 0 && !w.own
}

// Patterns returns one field's effective list (with "own" if given) and
// where it came from.
func (a *App) Patterns(fl Field) (pats []string, from string) {
	rs := &a.fields[fl]
	pats = []string{}
	for _, p := range rs.pats {
		pats = append(pats, p.src)
	}
	if rs.own {
		pats = append(pats, Own)
	}
	return pats, rs.from
}

// String prints the effective rules on one line per field, as `semfs policy
// check` shows them.
func (a *App) String() string {
	var b strings.Builder
	for fl := Field(0); fl < nFields; fl++ {
		pats, from := a.Patterns(fl)
		q := make([]string, len(pats))
		for i, s := range pats {
			q[i] = fmt.Sprintf("%q", s)
		}
		fmt.Fprintf(&b, "  %-5s [%s]  (%s)\n", fl, strings.Join(q, ", "), from)
	}
	return b.String()
}
