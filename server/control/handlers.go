package control

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/snapshot"
)

// MaxTagText bounds task and related-app text so that a tag stays a tag.
const (
	MaxTask        = 4096
	MaxRelatedApps = 64
	MaxQueryText   = 4096
	MaxLimit       = 10000
	MaxBatch       = 10000
)

func (s *Server) serveRegister(w http.ResponseWriter, r *http.Request) {
	var req RegisterRequest
	if !decode(w, r, &req) {
		return
	}
	p, _ := r.Context().Value(peerKey{}).(peer)
	if !p.ok {
		writeError(w, http.StatusForbidden, CodeForbidden, "the caller's uid is unknown (SO_PEERCRED failed)")
		return
	}
	if err := server.CheckApp(req.App); err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalid, err.Error())
		return
	}
	if err := s.opt.Registry.Register(p.uid, req.App); err != nil {
		writeErr(w, err)
		return
	}
	s.log.Info("registered app", "app", req.App, "uid", p.uid, "pid", p.pid)
	writeJSON(w, http.StatusOK, RegisterResponse{App: req.App, UID: p.uid})
}

func (s *Server) serveTag(w http.ResponseWriter, r *http.Request) {
	var req TagRequest
	if !decode(w, r, &req) {
		return
	}
	ir, ok := s.checkTag(w, r, req, "")
	if !ok {
		return
	}
	rec, err := s.opt.Index.Tag(r.Context(), ir.Path, ir.Task, ir.RelatedApps, ir.Vector)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rec)
}

// serveTags tags many files in one batched embedding call and one transaction:
// all or nothing. It is how an app that tags thousands of files stays fast.
func (s *Server) serveTags(w http.ResponseWriter, r *http.Request) {
	var req TagsRequest
	if !decode(w, r, &req) {
		return
	}
	if len(req.Tags) == 0 || len(req.Tags) > MaxBatch {
		writeError(w, http.StatusBadRequest, CodeInvalid, fmt.Sprintf("tags must hold 1 to %d requests", MaxBatch))
		return
	}
	batch := make([]index.TagRequest, len(req.Tags))
	for i, t := range req.Tags {
		ir, ok := s.checkTag(w, r, t, fmt.Sprintf("tags[%d]: ", i))
		if !ok {
			return
		}
		batch[i] = ir
	}
	recs, err := s.opt.Index.TagMany(r.Context(), batch)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, TagsResponse{Records: recs})
}

// checkTag validates one tag request and that its file exists; on failure it
// has written the error.
func (s *Server) checkTag(w http.ResponseWriter, r *http.Request, req TagRequest, where string) (index.TagRequest, bool) {
	fail := func(status int, code, msg string) (index.TagRequest, bool) {
		writeError(w, status, code, where+msg)
		return index.TagRequest{}, false
	}
	p, err := server.CleanPath("tag", req.Path)
	if err != nil {
		return fail(http.StatusBadRequest, CodeInvalidPath, err.Error())
	}
	if p == "" {
		return fail(http.StatusBadRequest, CodeInvalidPath, "path is empty: name a file")
	}
	if msg := CheckTags(req.Task, req.RelatedApps); msg != "" {
		return fail(http.StatusBadRequest, CodeInvalid, msg)
	}
	if req.Embedding != nil {
		if msg := checkVector(req.Embedding); msg != "" {
			return fail(http.StatusBadRequest, CodeInvalid, msg)
		}
	}
	// A hidden path answers as a missing one, at the same step, whatever
	// the backing directory would have said of it.
	app, rules := s.rules(r)
	if rules != nil && rules.Hidden(p) {
		return fail(http.StatusNotFound, CodeNotFound, "no such file: /"+p)
	}
	a, err := s.opt.FS.Lstat(r.Context(), p)
	if err != nil {
		if server.KindOf(err) == server.KindNotFound {
			return fail(http.StatusNotFound, CodeNotFound, "no such file: /"+p)
		}
		writeErr(w, err)
		return index.TagRequest{}, false
	}
	if a.IsDir() {
		return fail(http.StatusBadRequest, CodeInvalidPath, "/"+p+" is a directory; tags belong to files")
	}
	if msg := s.mayTag(app, rules, p); msg != "" {
		return fail(http.StatusForbidden, CodeForbidden, msg)
	}
	return index.TagRequest{Path: p, Task: req.Task, RelatedApps: req.RelatedApps, Vector: req.Embedding}, true
}

// CheckTags says what is wrong with a task and related apps ("" = nothing):
// the one rule for every door that tags (this API, and the mount's tags files
// and extended attributes in server/meta).
func CheckTags(task string, relatedApps []string) string {
	if len(task) > MaxTask {
		return fmt.Sprintf("task is over %d bytes", MaxTask)
	}
	if len(relatedApps) > MaxRelatedApps {
		return fmt.Sprintf("more than %d related apps", MaxRelatedApps)
	}
	for i, a := range relatedApps {
		if msg := checkRelatedApp(a); msg != "" {
			return fmt.Sprintf("relatedApps[%d]: %s", i, msg)
		}
	}
	return ""
}

// checkRelatedApp accepts any printable name up to 128 bytes: related apps are
// free text that other apps wrote, unlike the caller's own app name.
func checkRelatedApp(a string) string {
	if strings.TrimSpace(a) == "" {
		return "empty name"
	}
	if len(a) > 128 {
		return "longer than 128 bytes"
	}
	for _, c := range a {
		if c < 0x20 || c == 0x7f {
			return "control characters are not allowed"
		}
	}
	return ""
}

// checkVector catches what JSON lets through; the index checks the model and
// its dimensions.
func checkVector(v *index.Vector) string {
	if v.Model == "" {
		return "embedding.model is empty"
	}
	if len(v.Values) == 0 {
		return "embedding.vector is empty"
	}
	for i, x := range v.Values {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Sprintf("embedding.vector[%d] is not a finite number", i)
		}
	}
	return ""
}

func (s *Server) serveQuery(w http.ResponseWriter, r *http.Request) {
	var req QueryRequest
	if !decode(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Text) == "" && req.Embedding == nil {
		writeError(w, http.StatusBadRequest, CodeInvalid, "text is empty")
		return
	}
	if len(req.Text) > MaxQueryText {
		writeError(w, http.StatusBadRequest, CodeInvalid, fmt.Sprintf("text is over %d bytes", MaxQueryText))
		return
	}
	if req.Limit < 0 || req.Limit > MaxLimit {
		writeError(w, http.StatusBadRequest, CodeInvalid, fmt.Sprintf("limit must be 0 (all) to %d", MaxLimit))
		return
	}
	if req.Rank != "" && req.Rank != index.RankBest && req.Rank != index.RankSeed {
		writeError(w, http.StatusBadRequest, CodeInvalid, fmt.Sprintf("rank %q: want %q (the default) or %q", req.Rank, index.RankBest, index.RankSeed))
		return
	}
	if req.Embedding != nil {
		if msg := checkVector(req.Embedding); msg != "" {
			writeError(w, http.StatusBadRequest, CodeInvalid, msg)
			return
		}
	}
	_, rules := s.rules(r)
	limit := req.Limit
	if rules != nil && rules.HidesAny() {
		limit = 0 // hidden results are dropped below, so the limit applies after
	}
	q, ok := s.queryScope(w, r, req)
	if !ok {
		return
	}
	q.Limit = limit
	res, err := s.opt.Index.Query(r.Context(), q)
	if err != nil {
		writeErr(w, err)
		return
	}
	res = visible(rules, res, req.Limit)
	if res == nil {
		res = []index.Result{}
	}
	writeJSON(w, http.StatusOK, QueryResponse{Results: res})
}

func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	raw, _ := strings.CutPrefix(r.URL.Path, "/v1/files/")
	if r.URL.Path == "/v1/files" {
		raw = ""
	}
	p, err := server.CleanPath("get", raw)
	if err != nil || p == "" {
		msg := "path is empty: name a file"
		if err != nil {
			msg = err.Error()
		}
		writeError(w, http.StatusBadRequest, CodeInvalidPath, msg)
		return
	}
	if _, rules := s.rules(r); rules != nil && rules.Hidden(p) {
		writeErr(w, notFound("get", p))
		return
	}
	rec, err := s.opt.Index.Get(p)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rec)
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	var h Health
	if s.opt.Health != nil {
		h = s.opt.Health()
	}
	h.Status = "ok"
	h.Index = s.opt.Index.Stats()
	if s.opt.Policy != nil {
		st := s.opt.Policy.Status()
		h.Policy = &st
	}
	h.Registered = map[string]string{}
	for uid, app := range s.opt.Registry.All() {
		h.Registered[strconv.FormatUint(uint64(uid), 10)] = app
	}
	// The backing directory is looked at now, not only by the core's periodic
	// check: a monitor must never be told "ok" about a directory that is gone.
	if err := s.opt.FS.CheckBacking(); err != nil {
		h.Status = "unhealthy"
		h.Error = &ErrorDetail{Code: CodeUnavailable, Message: err.Error()}
		writeJSON(w, http.StatusServiceUnavailable, h)
		return
	}
	writeJSON(w, http.StatusOK, h)
}

// serveSnapshot builds the archive in a temporary file first, so that writers are
// held back only for as long as a local copy takes, not for as long as a slow
// client reads; then it streams the file with its exact length.
func (s *Server) serveSnapshot(w http.ResponseWriter, r *http.Request) {
	if s.opt.Snapshot == nil {
		writeError(w, http.StatusNotFound, CodeNotFound, "snapshots are not available")
		return
	}
	ctx := r.Context()
	if _, rules := s.rules(r); rules != nil && rules.HidesAny() {
		// The app's snapshot holds what it sees (policy.go).
		ctx = snapshot.WithView(ctx, rules.Hidden)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".semfs-snapshot-*")
	if err != nil {
		tmp, err = os.CreateTemp("", ".semfs-snapshot-*")
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, CodeInternal, "snapshot: "+err.Error())
		return
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := s.opt.Snapshot(ctx, tmp, nil); err != nil {
		writeErr(w, fmt.Errorf("snapshot: %w", err))
		return
	}
	size, err := tmp.Seek(0, 1)
	if err == nil {
		_, err = tmp.Seek(0, 0)
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, CodeInternal, "snapshot: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/x-tar")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(http.StatusOK)
	if _, err := copyCtx(r.Context(), w, tmp); err != nil {
		s.log.Warn("snapshot transfer ended early", "err", err)
	}
}

func copyCtx(ctx context.Context, w http.ResponseWriter, f *os.File) (int64, error) {
	buf := make([]byte, 1<<20)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		k, err := f.Read(buf)
		if k > 0 {
			m, werr := w.Write(buf[:k])
			n += int64(m)
			if werr != nil {
				return n, werr
			}
		}
		if err != nil {
			if err == io.EOF {
				return n, nil
			}
			return n, err
		}
	}
}
