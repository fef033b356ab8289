package control

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

	"github.com/semfs/semfs/index"
)

// Client talks to the daemon's control socket. Safe for concurrent use.
type Client struct {
	Socket string
	http   *http.Client
}

// NewClient returns a client for the socket at path.
func NewClient(path string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
		DisableCompression: true,
	}
	return &Client{Socket: path, http: &http.Client{Transport: tr}}
}

// APIError is an error the daemon answered with.
type APIError struct {
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string { return fmt.Sprintf("%s (%d %s)", e.Message, e.Status, e.Code) }

// UnreachableError means the daemon could not be reached at all.
type UnreachableError struct {
	Socket string
	Err    error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the semfs daemon at %s: %v (is `semfs serve` running?)", e.Socket, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

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
	resp, err := c.http.Do(req)
	if err != nil {
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

// Register binds the caller's uid to app.
func (c *Client) Register(ctx context.Context, app string) (RegisterResponse, error) {
	var out RegisterResponse
	err := c.do(ctx, http.MethodPost, "/v1/register", RegisterRequest{App: app}, &out)
	return out, err
}

// Tag replaces the tags of the file at path.
func (c *Client) Tag(ctx context.Context, req TagRequest) (index.Record, error) {
	var out index.Record
	err := c.do(ctx, http.MethodPost, "/v1/tag", req, &out)
	return out, err
}

// TagMany tags many files in one call, all or nothing.
func (c *Client) TagMany(ctx context.Context, reqs []TagRequest) ([]index.Record, error) {
	var out TagsResponse
	err := c.do(ctx, http.MethodPost, "/v1/tags", TagsRequest{Tags: reqs}, &out)
	return out.Records, err
}

// Query returns matching files, best first.
func (c *Client) Query(ctx context.Context, req QueryRequest) ([]index.Result, error) {
	var out QueryResponse
	err := c.do(ctx, http.MethodPost, "/v1/query", req, &out)
	return out.Results, err
}

// File returns one file's record.
func (c *Client) File(ctx context.Context, path string) (index.Record, error) {
	var out index.Record
	u := "/v1/files/" + (&url.URL{Path: strings.TrimLeft(path, "/")}).EscapedPath()
	err := c.do(ctx, http.MethodGet, u, nil, &out)
	return out, err
}

// Health returns the daemon's state.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var out Health
	err := c.do(ctx, http.MethodGet, "/v1/health", nil, &out)
	return out, err
}

// Snapshot asks the daemon for an archive; the caller reads and closes the body.
// size is the archive's length in bytes.
func (c *Client) Snapshot(ctx context.Context) (body io.ReadCloser, size int64, err error) {
	resp, err := c.send(ctx, http.MethodPost, "/v1/snapshot", struct{}{})
	if err != nil {
		return nil, 0, err
	}
	return resp.Body, resp.ContentLength, nil
}
