package client_test

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/index/passage"
	"github.com/semfs/semfs/server/control"
)

// TestWireTypesMatchServer checks that every client type has exactly the JSON
// shape of the type the daemon encodes or decodes: the same field names, the
// same omitempty, the same JSON kinds, recursively. The daemon's types stay the
// single truth; a field added there and not here fails this test.
func TestWireTypesMatchServer(t *testing.T) {
	pairs := []struct {
		name           string
		client, server any
	}{
		{"RegisterRequest", client.RegisterRequest{}, control.RegisterRequest{}},
		{"RegisterResponse", client.RegisterResponse{}, control.RegisterResponse{}},
		{"TagRequest", client.TagRequest{}, control.TagRequest{}},
		{"TagsRequest", client.TagsRequest{}, control.TagsRequest{}},
		{"TagsResponse", client.TagsResponse{}, control.TagsResponse{}},
		{"QueryRequest", client.QueryRequest{}, control.QueryRequest{}},
		{"QueryResponse", client.QueryResponse{}, control.QueryResponse{}},
		{"Record", client.Record{}, index.Record{}},
		{"Result", client.Result{}, index.Result{}},
		{"Vector", client.Vector{}, index.Vector{}},
		{"Health", client.Health{}, control.Health{}},
		{"IndexStats", client.IndexStats{}, index.Stats{}},
		{"ErrorBody", client.ErrorBody{}, control.ErrorBody{}},
		{"GrepRequest", client.GrepRequest{}, control.GrepRequest{}},
		{"GrepResponse", client.GrepResponse{}, control.GrepResponse{}},
		{"ContentStats", client.ContentStats{}, content.IndexStats{}},
		{"PassageStats", client.PassageStats{}, passage.Stats{}},
		{"Passage", client.Passage{}, index.Passage{}},
		{"Change", client.Change{}, control.Change{}},
		{"ChangesResponse", client.ChangesResponse{}, control.ChangesResponse{}},
		{"ChangesStats", client.ChangesStats{}, control.ChangesStats{}},
	}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			c := jsonShape(reflect.TypeOf(p.client))
			s := jsonShape(reflect.TypeOf(p.server))
			if !reflect.DeepEqual(c, s) {
				t.Errorf("client's JSON shape differs from the daemon's\nclient: %s\nserver: %s", strings.Join(c, "\n        "), strings.Join(s, "\n        "))
			}
		})
	}
}

func TestConstantsMatchServer(t *testing.T) {
	for _, c := range []struct{ client, server string }{
		{client.CodeBadRequest, control.CodeBadRequest},
		{client.CodeInvalid, control.CodeInvalid},
		{client.CodeInvalidPath, control.CodeInvalidPath},
		{client.CodeNotFound, control.CodeNotFound},
		{client.CodeTooLarge, control.CodeTooLarge},
		{client.CodeMethod, control.CodeMethod},
		{client.CodeForbidden, control.CodeForbidden},
		{client.CodeInternal, control.CodeInternal},
		{client.CodeUnavailable, control.CodeUnavailable},
	} {
		if c.client != c.server {
			t.Errorf("client code %q, daemon code %q", c.client, c.server)
		}
	}
	if client.MaxBody != control.MaxBody {
		t.Errorf("MaxBody: client %d, daemon %d", client.MaxBody, control.MaxBody)
	}
}

// jsonShape lists a type's JSON paths with their kind, as encoding/json sees
// them: "path.field kind [omitempty]", sorted. Embedded structs without a tag
// are flattened, as encoding/json does.
func jsonShape(t reflect.Type) []string {
	var out []string
	var walk func(prefix string, t reflect.Type, depth int)
	walk = func(prefix string, t reflect.Type, depth int) {
		if depth > 8 {
			return
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Slice, reflect.Array:
			out = append(out, prefix+" array")
			walk(prefix+"[]", t.Elem(), depth+1)
			return
		case reflect.Map:
			out = append(out, prefix+" object(map)")
			walk(prefix+"{}", t.Elem(), depth+1)
			return
		case reflect.Struct:
			if t.PkgPath() == "time" {
				out = append(out, prefix+" "+t.String())
				return
			}
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				if !f.IsExported() {
					continue
				}
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if f.Anonymous && name == "" {
					walk(prefix, f.Type, depth+1)
					continue
				}
				if name == "" {
					name = f.Name
				}
				p := prefix + "." + name
				if strings.Contains(opts, "omitempty") {
					out = append(out, p+" omitempty")
				}
				walk(p, f.Type, depth+1)
			}
			return
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
			out = append(out, prefix+" number")
			return
		default:
			out = append(out, prefix+" "+t.Kind().String())
		}
	}
	walk("", t, 0)
	sort.Strings(out)
	return out
}
