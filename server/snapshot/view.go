package snapshot

import "context"

// A snapshot taken by an app under a --policy file holds what that app sees:
// no file, directory or index record of a path hidden from it.

type viewKey struct{}

// WithView returns a context under which Write leaves out every path for
// which hidden is true (a directory's answer covers what is below it, as
// policy.App.Hidden's does).
func WithView(ctx context.Context, hidden func(path string) bool) context.Context {
	return context.WithValue(ctx, viewKey{}, hidden)
}

// keepOf is the paths Write keeps under ctx; nil keeps every path.
func keepOf(ctx context.Context) func(string) bool {
	hidden, _ := ctx.Value(viewKey{}).(func(string) bool)
	if hidden == nil {
		return nil
	}
	return func(p string) bool { return !hidden(p) }
}
