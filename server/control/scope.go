package control

import (
	"fmt"
	"net/http"

	"github.com/semfs/semfs/index"
)

// queryScope turns a query request into the index's query, with its scope:
// "all" (or absent) adds the files' contents to the best rank's evidence
// (Options.Contents, for the socket's peer), "tags" keeps to tags and names;
// any other value is a 400.
func (s *Server) queryScope(w http.ResponseWriter, r *http.Request, req QueryRequest) (index.Query, bool) {
	q := index.Query{Text: req.Text, Vector: req.Embedding, Rank: req.Rank, Explain: req.Explain}
	switch req.Scope {
	case "", "all":
		if s.opt.Contents != nil && req.Rank != index.RankSeed {
			q.Contents = s.opt.Contents(callerContext(r))
		}
	case index.ScopeTags:
		q.Scope = index.ScopeTags
	default:
		writeError(w, http.StatusBadRequest, CodeInvalid, fmt.Sprintf("scope %q: want %q (the default) or %q", req.Scope, "all", index.ScopeTags))
		return q, false
	}
	return q, true
}
