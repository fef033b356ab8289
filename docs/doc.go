// Package docs holds semfs's documentation (the Markdown files beside this
// one). It has no code: its test checks that every relative link in the
// top-level README.md and BENCHMARKS.md and in docs/*.md points at a file that
// exists, and at a heading that exists when the link names one, so that moving
// text between pages cannot leave a reader at a dead end.
package docs
