package embed

import (
	"path"
	"strings"
)

// TagText is the text a file's tag embedding is computed from, shared by the
// index (which embeds it) and ./calibrate (which tuned thresholds on it):
//
//	TagText("fix auth bug", []string{"code-editor", "terminal"}, "notes/auth/login-failure.md")
//	  == "fix auth bug. code-editor, terminal. notes auth login failure"
//
// The task comes first and carries most meaning; the apps follow; the path
// is reduced to its words (separators / _ - . become spaces, the extension is
// dropped) because the model reads "login failure" far better than
// "login-failure.md". Empty parts are left out. The calibration compared
// this layout with others (labelled "apps:"/"path:" fields, raw paths): it
// separated related from unrelated queries best among those keeping all
// three parts. The result is empty only if all three parts are. A change
// here changes every stored vector: re-embed.
func TagText(task string, relatedApps []string, filePath string) string {
	var parts []string
	if t := strings.Join(strings.Fields(task), " "); t != "" {
		parts = append(parts, t)
	}
	var apps []string
	for _, a := range relatedApps {
		if a = strings.TrimSpace(a); a != "" {
			apps = append(apps, a)
		}
	}
	if len(apps) > 0 {
		parts = append(parts, strings.Join(apps, ", "))
	}
	if w := pathWords(filePath); w != "" {
		parts = append(parts, w)
	}
	return strings.Join(parts, ". ")
}

var pathSeparators = strings.NewReplacer("/", " ", "\\", " ", "_", " ", "-", " ", ".", " ")

// pathWords turns "notes/auth/login-failure.md" into "notes auth login failure".
func pathWords(p string) string {
	base := path.Base(p)
	// Keep dot-files' names (".gitignore" has no extension, it is the name).
	if ext := path.Ext(base); ext != "" && ext != base {
		p = strings.TrimSuffix(p, ext)
	}
	if w := strings.Join(strings.Fields(pathSeparators.Replace(p)), " "); w != "" {
		return w
	}
	// A name made only of separators ("---", "...") still names the file;
	// keep it rather than leave the tag text empty.
	return strings.Join(strings.Fields(p), " ")
}
