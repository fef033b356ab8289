package index

import "strings"

// tagText is the text a file's tag embedding is computed from: task, related apps
// and path, never the file's contents. It mirrors embed.TagText, which is being
// written alongside; switch to it once it lands so both sides embed the same text.
func tagText(task string, relatedApps []string, path string) string {
	var parts []string
	if task != "" {
		parts = append(parts, task)
	}
	var apps []string
	for _, a := range relatedApps {
		if a != "" {
			apps = append(apps, a)
		}
	}
	if len(apps) > 0 {
		parts = append(parts, "apps: "+strings.Join(apps, ", "))
	}
	parts = append(parts, "path: "+path)
	return strings.Join(parts, ". ")
}
