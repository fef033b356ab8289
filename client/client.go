package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Client talks to the daemon's control socket. New(path) and
// &Client{Socket: path} are equivalent; the transport is made on first use.
// Safe for concurrent use; do not change Socket after the first call.
type Client struct {
	// Socket is the control socket's path.
	Socket string

	once sync.Once
	http *http.Client
}

// New returns a client for the control socket at path.
func New(path string) *Client { return &Client{Socket: path} }

func (c *Client) httpClient() *http.Client {
	c.once.Do(func() {
		sock := c.Socket
		tr := &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", sock)
			},
			DisableCompression: true,
		}
		c.http = &http.Client{Transport: tr}
	})
	return c.http
}

// do sends in as JSON (nil: no body) and decodes the answer into out (nil: discard).
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	resp, err := c.send(ctx, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decoding %s %s: %w", method, path, err)
	}
	return nil
}

func (c *Client) send(ctx context.Context, method, path string, in any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://semfs"+path, body)
	if err != nil {
		return nil, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		// A cancelled or expired ctx is the caller's doing, not an outage.
		var ue *url.Error
		if errors.As(err, &ue) && ctx.Err() == nil {
			return nil, &UnreachableError{Socket: c.Socket, Err: ue.Err}
		}
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		var eb ErrorBody
		b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
		if json.Unmarshal(b, &eb) != nil || eb.Error.Code == "" {
			eb.Error = ErrorDetail{Code: "http", Message: strings.TrimSpace(string(b))}
		}
		return nil, &APIError{Status: resp.StatusCode, Code: eb.Error.Code, Message: eb.Error.Message}
	}
	return resp, nil
}

// Register binds the caller's uid (read by the daemon from the socket) to app.
func (c *Client) Register(ctx context.Context, app string) (RegisterResponse, error) {
	var out RegisterResponse
	err := c.do(ctx, http.MethodPost, "/v1/register", RegisterRequest{App: app}, &out)
	return out, err
}

// Tag replaces the tags of the file at req.Path.
func (c *Client) Tag(ctx context.Context, req TagRequest) (Record, error) {
	var out Record
	err := c.do(ctx, http.MethodPost, "/v1/tag", req, &out)
	return out, err
}

// TagMany tags many files in one call, all or nothing.
func (c *Client) TagMany(ctx context.Context, reqs []TagRequest) ([]Record, error) {
	var out TagsResponse
	err := c.do(ctx, http.MethodPost, "/v1/tags", TagsRequest{Tags: reqs}, &out)
	return out.Records, err
}

// Query returns matching files, best first.
func (c *Client) Query(ctx context.Context, req QueryRequest) ([]Result, error) {
	var out QueryResponse
	err := c.do(ctx, http.MethodPost, "/v1/query", req, &out)
	return out.Results, err
}

// File returns one file's record.
func (c *Client) File(ctx context.Context, path string) (Record, error) {
	var out Record
	err := c.do(ctx, http.MethodGet, FilePath(path), nil, &out)
	return out, err
}

// FilePath is the URL path of GET /v1/files/{path}, escaped.
func FilePath(path string) string {
	return "/v1/files/" + (&url.URL{Path: strings.TrimLeft(path, "/")}).EscapedPath()
}

// Health returns the daemon's state.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var out Health
	err := c.do(ctx, http.MethodGet, "/v1/health", nil, &out)
	return out, err
}

// Snapshot asks the daemon for a tar archive of the backing directory and the
// index; the caller reads and closes body. size is the archive's length in
// bytes (-1 if the daemon did not say).
func (c *Client) Snapshot(ctx context.Context) (body io.ReadCloser, size int64, err error) {
	resp, err := c.send(ctx, http.MethodPost, "/v1/snapshot", struct{}{})
	if err != nil {
		return nil, 0, err
	}
	return resp.Body, resp.ContentLength, nil
}

// Get sends GET path and returns the raw answer body, for routes without a
// typed method (and tests that decode answers strictly). The caller closes it.
func (c *Client) Get(ctx context.Context, path string) (io.ReadCloser, error) {
	resp, err := c.send(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// Post sends POST path with in as JSON and returns the raw answer body; see Get.
func (c *Client) Post(ctx context.Context, path string, in any) (io.ReadCloser, error) {
	resp, err := c.send(ctx, http.MethodPost, path, in)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
