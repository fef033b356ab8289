package control

import (
	"net/http"
	"strings"
	"time"
)

// routeOf is the label Observe sees: the route's name, never the raw path (a
// path is unbounded, a metric label must not be).
func routeOf(path string) string {
	if strings.HasPrefix(path, "/v1/files/") {
		return "files"
	}
	switch name, _ := strings.CutPrefix(path, "/v1/"); name {
	case "register", "tag", "tags", "query", "grep", "health", "snapshot", "metrics":
		return name
	}
	return "other"
}

// observe tells Options.Observe of each answered request: its route, status
// and the time until the handler returned.
func (s *Server) observe(h http.Handler) http.Handler {
	if s.opt.Observe == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		s.opt.Observe(routeOf(r.URL.Path), sw.status, time.Since(start))
	})
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
