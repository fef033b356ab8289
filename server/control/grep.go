package control

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"

	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/server"
)

// serveGrep answers POST /v1/grep: exact matching of a Go RE2 pattern (or a
// literal) over the export's files, as the socket's peer: only files that
// caller may read are searched (a daemon in root mode checks them as that
// uid; see server's Root mode).
func (s *Server) serveGrep(w http.ResponseWriter, r *http.Request) {
	if s.opt.Grep == nil {
		writeError(w, http.StatusNotFound, CodeNotFound, "grep is not available")
		return
	}
	var req GrepRequest
	if !decode(w, r, &req) {
		return
	}
	ans, err := s.opt.Grep(callerContext(r), req)
	if err != nil {
		if errors.Is(err, content.ErrInvalid) {
			writeError(w, http.StatusBadRequest, CodeInvalid, strings.TrimPrefix(err.Error(), content.ErrInvalid.Error()+": "))
			return
		}
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ans)
}

// callerContext is r's context carrying the socket peer's identity, so that
// the core checks file access (and the --policy file) as that user. The
// operator (root, or the daemon's own uid) is the daemon, which nothing
// limits, as everywhere on the control socket (rules). A peer whose
// credentials could not be read is nobody.
func callerContext(r *http.Request) context.Context {
	p, _ := r.Context().Value(peerKey{}).(peer)
	if p.ok && (p.uid == 0 || p.uid == uint32(os.Getuid())) {
		return r.Context()
	}
	id := server.Identity{Proto: "control"}
	if p.ok {
		id.UID, id.HasUID = p.uid, true
		id.GID, id.HasGID = p.gid, true
		if _, groups, ok := server.UserGroups(p.uid); ok {
			id.Groups = groups
		}
	}
	return server.WithIdentity(r.Context(), id)
}
