// Package policy holds the operator's per-app views and rights (issue 26): a
// JSON file naming, for each app, the paths it may see, read, write and tag.
//
//	{
//	  "default": {"read": ["**"], "write": ["**"], "tag": ["**"], "hide": []},
//	  "apps": {
//	    "agent":  {"write": ["agent/**", "scratch/**"], "tag": ["own"], "hide": ["secrets/**", "**/*.key"]},
//	    "viewer": {"write": []},
//	    "":       {"write": [], "hide": ["**"]}
//	  }
//	}
//
// Invariants:
//   - An app's rules are default's, overridden field by field by its own
//     entry; an app without an entry has default's; "" is the unattributed
//     caller. A field absent from "default" is today's behaviour (read, write
//     and tag everything, hide nothing).
//   - Patterns are doublestar globs ("**" any depth, "*" within one segment)
//     matched against slash-separated paths relative to the backing directory,
//     never starting with "/"; a pattern ending in "/" means the directory and
//     everything below it. "own" (write and tag only) means files whose
//     created_by is the app.
//   - Hidden wins: a path any of whose ancestors is hidden is hidden itself,
//     and a hidden path is neither read, written nor tagged. The root is never
//     hidden (an app hiding "**" sees an empty export).
//   - A Policy is immutable once parsed (its per-directory caches aside, which
//     only remember answers), so a reload swaps whole Policies and a decision
//     never sees half of one. Every method is safe for concurrent use.
//   - Bad input is refused whole with its line and column: malformed JSON,
//     unknown or repeated fields, a bad glob, "own" where it means nothing, an
//     app name the daemon would not register.
package policy
